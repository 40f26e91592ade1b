"""Sample files for the attachment tests: a real (tiny) PNG, a renamed Windows program, a large file."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 64, height: int = 40, rgb: tuple[int, int, int] = (220, 40, 40)) -> bytes:
    """A valid PNG of one colour (built by hand: no image library is a dependency)."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


EXE = (
    b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"
    + b"\x00" * 200
    + b"This program cannot be run in DOS mode."
)
"""The start of a Windows program, to be sent as `screenshot.png`."""

TWENTY_MB = 20 * 1024 * 1024


def bomb(width: int = 30_000, height: int = 30_000) -> bytes:
    """A PNG of a few KB that claims `width` × `height` grey pixels (its first rows of zeros, compressed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(b"\x00" * (width + 1) * 64, 9)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
