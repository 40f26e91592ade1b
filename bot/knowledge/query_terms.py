"""A one-shot search's query terms, worked out in a second Python process while this one loads the rest.

Kiwi's load (~1.2 s of CPU) holds the GIL from start to end: in a thread it ran after, not beside,
Chroma's imports and the models' loads, and was a third of a cold `arca-bot search`. A second process
runs it on the other core. That process runs this package's `analysis.py` alone (not the package: the
rest of the search is not imported there) and the same `analyze_query` and `keyword_head` on the same
Kiwi, so the terms are the ones this process would have made. When it fails, nothing is adopted and the
search makes them itself, loading Kiwi then.

Only for a process that searches once (`arca-bot search`): the bot loads Kiwi itself at start-up
(`PolicyIndex.warm_up`), as every later question needs it.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from types import TracebackType

from bot.knowledge import analysis

log = logging.getLogger(__name__)

ANSWER_TIMEOUT_S = 60.0
"""How long the search waits for the second process before making the terms itself."""

_PROGRAM = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('arca_query_analysis', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n"
    "module.serve_query_terms()\n"
)


class QueryTermsAside:
    """The second process analysing one query; `adopt` hands its answer to `analysis`."""

    def __init__(self, query: str) -> None:
        self.query = analysis.search_text(query)
        self._process: subprocess.Popen[bytes] | None = None
        if not self.query:
            return
        try:
            # -P: the current directory is not put on the second process's import path
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", _PROGRAM, analysis.__file__, self.query],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except (OSError, ValueError, UnicodeError):  # no interpreter to start, a query argv refuses
            log.debug("the query's terms are made in this process", exc_info=True)

    def adopt(self, timeout: float = ANSWER_TIMEOUT_S) -> bool:
        """Wait for the second process and give its terms to `analysis.adopt_query_terms`; False (and the
        search makes them itself) when it failed, timed out or answered for another query."""
        process, self._process = self._process, None
        if process is None:
            return False
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            log.warning("the query analysis process took over %.0f s; analysing here", timeout)
            return False
        try:
            if process.returncode != 0:
                raise ValueError(f"exit {process.returncode}: {err.decode(errors='replace')[-500:]}")
            answer = json.loads(out)
            if answer["query"] != self.query:
                raise ValueError("answered for another query")
            terms = tuple(str(t) for t in answer["terms"])
            head = answer["head"]
            if head is not None and not isinstance(head, str):
                raise ValueError(f"head {head!r}")
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("the query analysis process failed (%s); analysing here", exc)
            return False
        analysis.adopt_query_terms(self.query, terms, head)
        return True

    def close(self) -> None:
        """End the second process if nobody waited for it (the command failed before searching)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.communicate()

    def __enter__(self) -> QueryTermsAside:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
