"""`arca-bot index` and `arca-bot search` (DESIGN.md §10): thin command bodies over `PolicyIndex`.

They return exit codes: 0 done, 2 bad input (empty query, malformed policy file, missing directory),
1 anything else. Results go to stdout; logs and errors go to stderr, so `search --json` prints one
JSON array and nothing else.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.knowledge.documents import KnowledgeError, PolicyFormatError, large_policy_files
from bot.knowledge.hits import PolicyHit
from bot.knowledge.index import PolicyIndex, Progress

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.knowledge.query_terms import QueryTermsAside

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _err(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def index_command(settings: Settings, policies_dir: Path | None = None, *, out: TextIO | None = None) -> int:
    """Rebuild the index from `policies_dir` (default: the configured policies dir); it then holds
    exactly that directory's documents."""
    out = out or sys.stdout
    directory = Path(policies_dir) if policies_dir is not None else settings.policies_dir
    index = PolicyIndex.from_settings(settings)
    try:
        for path, size in large_policy_files(directory):
            print(
                f"warning: {path} is {size / 1024:.0f} KB; a policy file that large is slow to index "
                "and is usually not a policy (split it by topic)",
                file=sys.stderr,
            )
        with _progress_bar() as progress:
            counts = index.reindex(directory, progress=progress)
        index.fit_search_model()  # stored with the index: no later start embeds its sentences again
    except PolicyFormatError as exc:
        _err(f"{exc.path}:{exc.line}: {exc.message}")
        return EXIT_USAGE
    except KnowledgeError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except Exception as exc:  # Chroma unreachable, disk full: one line, not a traceback
        log.debug("index failed", exc_info=True)
        _err(f"indexing failed: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    finally:
        index.close()
    print(f"{counts} from {directory}", file=out)
    return EXIT_OK


@contextmanager
def _progress_bar() -> Iterator[Progress | None]:
    """A progress bar on stderr while chunks are embedded, when stderr is a terminal; else nothing."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar(
        "embedding policy sections",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("index", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _hit_json(hit: PolicyHit) -> dict[str, object]:
    return {
        "source": hit.source,
        "section": hit.section,
        "score": hit.score,
        "text": hit.text,
        "title": hit.title,
        "doc_id": hit.doc_id,
        "neighbour_section": hit.neighbour_section,
        "neighbour_text": hit.neighbour_text,
        "neighbour_source": hit.neighbour_source,
        "neighbour_title": hit.neighbour_title,
    }


def search_command(
    settings: Settings,
    query: str,
    top_k: int = 3,
    as_json: bool = False,
    *,
    out: TextIO | None = None,
    terms: QueryTermsAside | None = None,
) -> int:
    """Print the best policy passages for `query`; builds the index from the policies dir if missing.
    `terms`: the query's terms being worked out in a second process (`arca-bot search`), adopted here
    instead of loading Kiwi in this one."""
    out = out or sys.stdout
    query = (query or "").strip()
    if not query:
        _err("the search query is empty; give the words to look for, e.g. arca-bot search '쿠폰 한도'")
        return EXIT_USAGE
    if top_k < 1:
        _err(f"--top-k must be at least 1 (got {top_k})")
        return EXIT_USAGE
    index = PolicyIndex.from_settings(settings)
    try:
        with index.loading(query, analyzer=terms is None):  # the models load while Chroma opens
            built = index.ensure_built(settings.policies_dir)
            index.read_chunks()
        if terms is not None:
            terms.adopt()
        if built is not None:
            log.info("no policy index yet; %s", built)
        hits = index.search_sync(query, top_k=top_k)
    except PolicyFormatError as exc:
        _err(f"{exc.path}:{exc.line}: {exc.message}")
        return EXIT_USAGE
    except KnowledgeError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except Exception as exc:
        log.debug("search failed", exc_info=True)
        _err(f"search failed: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    finally:
        index.close()
    if as_json:
        out.write(json.dumps([_hit_json(h) for h in hits], ensure_ascii=False))
        out.write("\n")
        return EXIT_OK
    if not hits:
        print("관련 정책을 찾지 못했습니다. (no matching policy)", file=out)
        return EXIT_OK
    for i, hit in enumerate(hits, start=1):
        print(f"{i}. {hit.citation}  {hit.source}  score={hit.score:.3f}", file=out)
        for line in hit.text.splitlines():
            if line.strip():
                print(f"   {line}", file=out)
        if hit.neighbour_section:
            print(f"   + {hit.neighbour_citation}", file=out)
            for line in hit.neighbour_text.splitlines():
                if line.strip():
                    print(f"     {line}", file=out)
    return EXIT_OK
