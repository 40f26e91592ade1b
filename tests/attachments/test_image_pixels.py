"""Images by their pixels: a decompression bomb (a small PNG whose header claims 30,000 × 30,000 pixels) is
refused on its header, never decoded; a screenshot gets a thumbnail the server draws (at most 320 px a
side), and no thumbnail is made of an image past the limit."""

from __future__ import annotations

import io
import struct
import time
import zlib
from pathlib import Path

from PIL import Image

from bot.attachments import AttachmentBox, Refusal, StoredAttachment, Upload
from bot.attachments.images import image_pixels, thumbnail
from bot.attachments.texts import refusal_text
from bot.store import Store
from tests.attachments.files import png


def bomb(width: int = 30_000, height: int = 30_000) -> bytes:
    """A PNG of a few KB that claims `width` × `height` grey pixels (its first rows of zeros, compressed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(b"\x00" * (width + 1) * 64, 9)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def test_the_size_comes_from_the_header_without_decoding() -> None:
    started = time.perf_counter()
    assert image_pixels(bomb()) == 900_000_000
    assert image_pixels(bomb(9_000, 9_000)) == 81_000_000  # below Pillow's own refusal: still only the header
    assert time.perf_counter() - started < 1.0  # nothing was decoded
    assert image_pixels(png(64, 40)) == 64 * 40
    assert image_pixels(b"\x89PNG\r\n\x1a\n" + b"junk") is None


async def test_a_decompression_bomb_is_refused_on_its_header(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att", max_pixels=40_000_000)
    data = bomb()
    assert len(data) < 64 * 1024
    got = await box.take(Upload.of_bytes("screenshot.png", data), owner="web:P100")
    assert isinstance(got, Refusal) and got.code == "too_many_pixels"
    assert got.size == 900_000_000 and got.limit == 40_000_000
    assert "해상도가 너무 큽니다(900,000,000 픽셀, 최대 40,000,000 픽셀)" in refusal_text(got, "ko")
    assert "too large in pixels" in refusal_text(got, "en")
    broken = await box.take(Upload.of_bytes("x.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40), owner="web:P100")
    assert isinstance(broken, Refusal) and broken.code == "wrong_type"


async def test_a_screenshot_gets_a_small_server_made_thumbnail(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att")
    shot = await box.take(Upload.of_bytes("wide.png", png(1600, 900)), owner="web:P100")
    assert isinstance(shot, StoredAttachment)
    made = await box.thumbnail(shot)
    assert made is not None and made.startswith(b"\xff\xd8\xff")  # a JPEG the server drew
    with Image.open(io.BytesIO(made)) as picture:
        assert picture.size == (320, 180)
    assert await box.thumbnail(shot) == made  # kept beside the files, drawn once
    assert box.files.thumbnail_path(shot.sha256).exists()


def test_no_thumbnail_is_drawn_of_an_image_past_the_limit() -> None:
    assert thumbnail(bomb(), max_pixels=40_000_000) is None
    assert thumbnail(png(100, 100), max_pixels=5_000) is None
    assert thumbnail(b"not an image") is None
