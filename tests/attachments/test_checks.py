"""Files are judged by their bytes, refused before they are read when too large, and kept once."""

from __future__ import annotations

from pathlib import Path

from bot.attachments import AttachmentBox, Refusal, StoredAttachment, Upload, sniff
from bot.store import Store
from tests.attachments.files import EXE, TWENTY_MB, png


def test_type_comes_from_the_content_not_the_name() -> None:
    assert sniff(png(), "x.txt").mime == "image/png"
    assert sniff(b"\xff\xd8\xff\xe0" + b"\x00" * 20, "a.png").mime == "image/jpeg"
    assert sniff(b"GIF89a" + b"\x00" * 20, "a").mime == "image/gif"
    assert sniff(b"RIFF\x10\x00\x00\x00WEBPVP8 ", "a").mime == "image/webp"
    assert sniff(EXE, "screenshot.png").kind == "executable"
    assert sniff(b"\x7fELF\x02\x01", "log.txt").kind == "executable"
    assert sniff("오류 코드 E-1042\n".encode(), "error.log").mime == "text/plain; charset=utf-8"
    assert sniff(b"\xff\xfe\x00binary", "error.txt").kind == "unknown"
    assert sniff(b"plain words", "notes.pdf").kind == "unknown"


async def test_an_oversized_file_is_refused_without_being_read(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att", max_bytes=8 * 1024 * 1024)

    async def never() -> bytes:
        raise AssertionError("an oversized file was downloaded")

    got = await box.take(Upload("big.png", TWENTY_MB, never), owner="discord:9001")
    assert isinstance(got, Refusal) and got.code == "too_large"
    # A channel that under-declares the size is caught on the bytes.
    got = await box.take(
        Upload("liar.png", 10, lambda: _bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 9_000_000)), owner="x"
    )
    assert isinstance(got, Refusal) and got.code == "too_large"


async def _bytes(data: bytes) -> bytes:
    return data


async def test_a_renamed_program_is_refused_and_nothing_is_kept(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att")
    got = await box.take(Upload.of_bytes("screenshot.png", EXE), owner="discord:9001")
    assert isinstance(got, Refusal) and got.code == "executable"
    assert not any(p.is_file() for p in (tmp_path / "att").rglob("*"))


async def test_a_screenshot_is_kept_once_by_content_and_read_back(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att")
    image = png()
    first = await box.take(Upload.of_bytes("../../etc/결제\x07오류.png", image), owner="discord:9001")
    second = await box.take(Upload.of_bytes("again.png", image), owner="discord:9001")
    assert isinstance(first, StoredAttachment) and isinstance(second, StoredAttachment)
    assert first.name == "결제오류.png" and first.mime == "image/png" and first.kind == "image"
    assert first.id != second.id and first.sha256 == second.sha256
    files = [p for p in (tmp_path / "att").rglob("*") if p.is_file()]
    assert files == [tmp_path / "att" / first.sha256[:2] / first.sha256]  # one file, no temp part left behind
    assert files[0].stat().st_mode & 0o111 == 0  # never executable
    await box.link([first], "discord:100")
    kept = await box.get(first.id)
    assert kept is not None and kept.thread_id == "discord:100"
    assert await box.read(kept) == image
    assert [a.id for a in await box.of_thread("discord:100")] == [first.id]
    assert await box.get("../../etc/passwd") is None
