"""What a file is, judged by its bytes (never by its name or the sender's content type).

Written by hand: four image signatures and a UTF-8 check are a dozen lines; nothing here ever decodes or
runs the file (an image's pixel size is read from its header by `bot.attachments.images`).
"""

from __future__ import annotations

from dataclasses import dataclass

IMAGE_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
EXECUTABLE_SIGNATURES: tuple[bytes, ...] = (
    b"MZ",  # Windows PE / DOS
    b"\x7fELF",  # Linux
    b"\xfe\xed\xfa\xce",  # Mach-O 32
    b"\xfe\xed\xfa\xcf",  # Mach-O 64
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",  # Mach-O universal / Java class
    b"#!",  # a script with an interpreter line
    b"PK\x03\x04",  # zip, jar, apk
    b"\x00asm",  # WebAssembly
)
TEXT_SUFFIXES = (".txt", ".log")


@dataclass(frozen=True)
class Sniffed:
    """A file judged by its content."""

    kind: str
    """`image`, `text`, `executable` or `unknown`."""
    mime: str | None = None
    """The content type served back for an `image` or `text` (`text/plain; charset=utf-8`)."""


def sniff(data: bytes, name: str) -> Sniffed:
    """Images by their signature; a text file by a `.txt` / `.log` name *and* valid UTF-8 without NULs;
    executables by theirs, whatever the name says."""
    for signature, mime in IMAGE_SIGNATURES:
        if data.startswith(signature):
            return Sniffed("image", mime)
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Sniffed("image", "image/webp")
    if any(data.startswith(signature) for signature in EXECUTABLE_SIGNATURES):
        return Sniffed("executable")
    if name.lower().endswith(TEXT_SUFFIXES) and b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return Sniffed("unknown")
        return Sniffed("text", "text/plain; charset=utf-8")
    return Sniffed("unknown")
