"""The policy search's fitted parts — the abstain evidence's domain classifiers and background vectors,
the second model's chunk vectors — stored beside the index, so a process start does not embed them again.

Fitting them embeds ~600 fixed sentences with each model: ~12 s of every CLI start on 2 cores
(issue 51). `FittedParts` keeps each part under a fingerprint of what it was made from (the model's
name, the training sentences, the fit's settings); a part whose fingerprint no longer matches (another
embedder, an edited bank) is made again and stored in its place. The file is one `.npz` (arrays only, no
pickle) written whole by replacing it, so a reader never sees half a file; a process keeps what it made
or read, so the indexes of one process (a reindex, a test session) share one fit per model.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILE_NAME = "fitted-parts.npz"
"""In the index's folder (`<data dir>/chroma`; beside a Chroma server's data dir the same folder)."""

Arrays = dict[str, np.ndarray]

_PROCESS: dict[tuple[str, str], Arrays] = {}
"""Parts made or read in this process, by (name, fingerprint): valid for any index of the process,
since a fingerprint names everything a part was made from."""
_PROCESS_LOCK = threading.Lock()


def fingerprint(*inputs: str) -> str:
    """A short digest of everything a part was made from."""
    digest = hashlib.sha256()
    for text in inputs:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def _key(name: str) -> str:
    # Model names hold slashes and whole paths (a sentence-transformers folder): not zip member names.
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]


class FittedParts:
    """Named groups of arrays, each under a fingerprint, in this process and in `<folder>/fitted-parts.npz`
    (memory only when `folder` is None)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = Path(folder) / FILE_NAME if folder is not None else None
        self._lock = threading.RLock()
        """Re-entrant: making a part embeds sentences, and the embedder's first use reads its own stored
        part (`bot.knowledge.use_tokenizer`) from the same object."""
        self._mine: dict[str, tuple[str, Arrays]] = {}
        """What this object read or made, by name: the file is read once per part."""
        self.made: list[str] = []
        """The names of the parts this object had to make (not found in memory or on disk)."""
        self._file: tuple[tuple[int, int, int], dict[str, tuple[str, Arrays]]] | None = None
        """The file as last read, under its (inode, size, mtime): a start reads several parts, and each
        read was of the whole file (a write replaces the file, so the key changes)."""

    def get(self, name: str, print_: str, make: Callable[[], Arrays]) -> Arrays:
        """The part `name` made from inputs whose fingerprint is `print_`: from the file, else from this
        process (then written to the file too), else made now by `make()` and stored."""
        with self._lock:
            mine = self._mine.get(name)
            if mine is not None and mine[0] == print_:
                return mine[1]
            stored = self._read().get(name)
            if stored is not None and stored[0] == print_:
                arrays = stored[1]
            else:
                with _PROCESS_LOCK:
                    arrays = _PROCESS.get((name, print_))
                if arrays is None:
                    arrays = {k: np.asarray(v) for k, v in make().items()}
                    self.made.append(name)
                self._write({name: (print_, arrays)})
            with _PROCESS_LOCK:
                _PROCESS[(name, print_)] = arrays
            self._mine[name] = (print_, arrays)
        return arrays

    def load(self, name: str, print_: str) -> Arrays | None:
        """The stored part `name` when its fingerprint is `print_` (the file only: parts that are
        updated in place, like chunk vectors, are not shared through the process)."""
        with self._lock:
            stored = self._read().get(name)
        return stored[1] if stored is not None and stored[0] == print_ else None

    def store(self, name: str, print_: str, arrays: Arrays) -> None:
        """Store (replace) the part `name` in the file."""
        with self._lock:
            self._write({name: (print_, {k: np.asarray(v) for k, v in arrays.items()})})

    # ---- the file ----------------------------------------------------------------------------

    def _read(self) -> dict[str, tuple[str, Arrays]]:
        """Every part in the file by name: (fingerprint, arrays); an unreadable file counts as empty
        (its parts are made again and the file rewritten)."""
        if self.path is None or not self.path.is_file():
            return {}
        try:
            stat = self.path.stat()
            signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            if self._file is not None and self._file[0] == signature:
                return self._file[1]
            with np.load(self.path, allow_pickle=False) as data:
                raw = {k: data[k] for k in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            log.warning(
                "the stored search model %s is unreadable (%s); it will be made again", self.path, exc
            )
            return {}
        parts: dict[str, tuple[str, Arrays]] = {}
        for member, value in raw.items():
            key, _, field = member.partition(".")
            if field == "name":
                name = str(value)
                arrays = {
                    m.partition(".")[2].removeprefix("a:"): v
                    for m, v in raw.items()
                    if m.startswith(f"{key}.a:")
                }
                parts[name] = (str(raw.get(f"{key}.fingerprint", "")), arrays)
        self._file = (signature, parts)
        return parts

    def _write(self, changed: dict[str, tuple[str, Arrays]]) -> None:
        """Merge `changed` into the file (read again first: another process may have added parts) and
        replace it in one rename."""
        if self.path is None:
            return
        parts = {**self._read(), **changed}
        members: dict[str, np.ndarray] = {}
        for name, (print_, arrays) in parts.items():
            key = _key(name)
            members[f"{key}.name"] = np.asarray(name)
            members[f"{key}.fingerprint"] = np.asarray(print_)
            members.update({f"{key}.a:{field}": value for field, value in arrays.items()})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".fitted-", suffix=".npz", dir=self.path.parent)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide it from a bot run as another user
            try:
                with os.fdopen(handle, "wb") as out:
                    np.savez(out, **members)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:  # a read-only data dir: the next process fits again, nothing breaks
            log.warning("could not store the search model in %s (%s)", self.path, exc)
