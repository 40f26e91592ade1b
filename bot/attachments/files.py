"""Attachment bytes on disk, named by their SHA-256 (`<root>/ab/abcdef…`): the same file sent twice is
kept once, and a file is written to a temporary name and renamed, so a reader never sees half of one."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from pathlib import Path


class AttachmentFiles:
    """Content-addressed files under `root` (the data dir's `attachments/`)."""

    def __init__(self, root: Path | None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        if self._root is None:  # no data dir given (a test, a replay): a private temporary one
            self._root = Path(tempfile.mkdtemp(prefix="arca-attachments-"))
        return self._root

    def path_of(self, sha256: str) -> Path:
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise ValueError("not a SHA-256 hex digest")
        return self.root / sha256[:2] / sha256

    async def put(self, data: bytes) -> str:
        """Keep `data`; returns its SHA-256 hex digest."""
        sha = hashlib.sha256(data).hexdigest()
        await asyncio.to_thread(self._write, sha, data)
        return sha

    def _write(self, sha: str, data: bytes) -> None:
        path = self.path_of(sha)
        if path.exists():
            # Kept again: its age restarts, so the sweep of unsent uploads (`remove_if_older`) spares it.
            os.utime(path)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o600)  # data, never executable
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get(self, sha256: str) -> bytes:
        return await asyncio.to_thread(self.path_of(sha256).read_bytes)

    def remove_if_older(self, sha256: str, cutoff: float) -> bool:
        """Delete the file of `sha256` unless it was (re)written after `cutoff` (a Unix time); True if gone."""
        path = self.path_of(sha256)
        try:
            if path.stat().st_mtime >= cutoff:
                return False
            path.unlink()
        except FileNotFoundError:
            return False
        self.thumbnail_path(sha256).unlink(missing_ok=True)
        return True

    def thumbnail_path(self, sha256: str) -> Path:
        return self.root / "thumbs" / sha256[:2] / f"{self.path_of(sha256).name}.jpg"

    async def get_thumbnail(self, sha256: str) -> bytes | None:
        path = self.thumbnail_path(sha256)
        try:
            return await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            return None

    async def put_thumbnail(self, sha256: str, data: bytes) -> None:
        await asyncio.to_thread(self._write_at, self.thumbnail_path(sha256), data)

    def _write_at(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
