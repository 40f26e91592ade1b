"""Uploads no message took: a sender keeps at most N of them (files and bytes), and the sweep deletes those
older than the expiry — their rows and the bytes no other upload shares — while sent files stay."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.attachments import AttachmentBox, Refusal, StoredAttachment, Upload
from bot.attachments.texts import refusal_text
from bot.config import load_settings
from bot.store import Store
from tests.attachments.files import png

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


async def _take(box: AttachmentBox, data: bytes, owner: str = "web:P100") -> StoredAttachment | Refusal:
    return await box.take(Upload.of_bytes("shot.png", data), owner=owner)


async def test_a_sender_keeps_at_most_n_unsent_uploads(store: Store, tmp_path: Path) -> None:
    box = AttachmentBox(store, tmp_path / "att", unsent_files=2, unsent_bytes=10_000_000)
    first, second = await _take(box, png(rgb=(1, 2, 3))), await _take(box, png(rgb=(4, 5, 6)))
    assert isinstance(first, StoredAttachment) and isinstance(second, StoredAttachment)
    third = await _take(box, png(rgb=(7, 8, 9)))
    assert isinstance(third, Refusal) and third.code == "quota"
    assert "보내지 않은 첨부 파일이 너무 많아" in refusal_text(third, "ko")
    assert "too many files waiting to be sent" in refusal_text(third, "en")
    assert isinstance(await _take(box, png(rgb=(7, 8, 9)), owner="web:P200"), StoredAttachment)
    await box.link([first], "web:P100:main")  # sent with a message: no longer waiting
    assert isinstance(await _take(box, png(rgb=(7, 8, 9))), StoredAttachment)


async def test_the_unsent_bytes_are_capped_too(store: Store, tmp_path: Path) -> None:
    big = png(400, 400, (9, 9, 9))
    box = AttachmentBox(store, tmp_path / "att", unsent_files=100, unsent_bytes=len(big) + 100)
    assert isinstance(await _take(box, big), StoredAttachment)
    got = await _take(box, png(400, 400, (8, 8, 8)))
    assert isinstance(got, Refusal) and got.code == "quota"


async def test_the_sweep_deletes_expired_unsent_uploads_and_keeps_sent_ones(
    store: Store, tmp_path: Path
) -> None:
    clock = Clock()
    box = AttachmentBox(store, tmp_path / "att", unsent_ttl=timedelta(minutes=60), clock=clock)
    unsent = await _take(box, png(rgb=(1, 1, 1)))
    sent = await _take(box, png(rgb=(2, 2, 2)))
    shared_unsent = await _take(box, png(rgb=(2, 2, 2)))  # the same bytes as a sent file
    assert all(isinstance(a, StoredAttachment) for a in (unsent, sent, shared_unsent))
    await box.link([sent], "web:P100:main")
    old = time.time() - 2 * 3600
    for item in (unsent, sent):
        os.utime(box.files.path_of(item.sha256), (old, old))
    clock.now = T0 + timedelta(minutes=59)
    assert await box.sweep() == 0
    clock.now = T0 + timedelta(minutes=61)
    assert await box.sweep() == 2
    assert await box.get(unsent.id) is None and await box.get(shared_unsent.id) is None
    assert not box.files.path_of(unsent.sha256).exists()
    assert await box.get(sent.id) is not None and box.files.path_of(sent.sha256).exists()
    assert await box.read(sent) == png(rgb=(2, 2, 2))


async def test_bytes_kept_again_after_the_cutoff_stay(store: Store, tmp_path: Path) -> None:
    clock = Clock()
    box = AttachmentBox(store, tmp_path / "att", unsent_ttl=timedelta(minutes=60), clock=clock)
    expired = await _take(box, png(rgb=(3, 3, 3)))
    path = box.files.path_of(expired.sha256)
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    clock.now = T0 + timedelta(minutes=61)
    fresh = await _take(box, png(rgb=(3, 3, 3)))  # the same screenshot uploaded again now
    assert await box.sweep() == 1
    assert path.exists() and await box.read(fresh) == png(rgb=(3, 3, 3))


def test_the_limits_are_settings_with_safe_defaults(tmp_path: Path) -> None:
    s = load_settings(ARCA_DATA_DIR=str(tmp_path))
    assert (s.attachment_unsent_files, s.attachment_unsent_bytes, s.attachment_unsent_minutes) == (
        20,
        128 * 1024 * 1024,
        60,
    )
    assert s.attachment_address_bytes == 256 * 1024 * 1024
