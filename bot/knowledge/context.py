"""What the model is given for each hit: its section, plus one more section of the same document when
that one scored close (issue 24): by default the best other section of the document (`FusionParams.
neighbour_scope`), else only the next or previous one, so a ranking that puts the section before or after
the answering one, or a sibling section of the same document, still hands the model the answering rule.

At most one neighbour per hit, and none that is already a hit: the excerpts stay within today's top 3
plus one section each.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.knowledge.fusion import Ranked
from bot.knowledge.hits import PolicyHit


def section_position(chunk_id: str) -> tuple[str, int, int] | None:
    """(source, section index, part) of a chunk id `<source>#<section>.<part>`; None for another shape."""
    source, _, position = chunk_id.rpartition("#")
    section, _, part = position.partition(".")
    if not source or not section.isdigit() or not part.isdigit():
        return None
    return source, int(section), int(part)


def _adjacent(a: str, b: str) -> bool:
    """Two chunks are neighbours: next sections of one document, or next parts of one section."""
    pa, pb = section_position(a), section_position(b)
    if pa is None or pb is None or pa[0] != pb[0]:
        return False
    if pa[1] == pb[1]:
        return abs(pa[2] - pb[2]) == 1
    return abs(pa[1] - pb[1]) == 1


def _same_document(a: str, b: str) -> bool:
    pa, pb = section_position(a), section_position(b)
    return pa is not None and pb is not None and pa[0] == pb[0]


def with_neighbours(
    ranked: Sequence[Ranked], top_k: int, margin: float, *, scope: str = "adjacent"
) -> list[PolicyHit]:
    """The `top_k` best hits, each with its best-scoring neighbour when that neighbour's fused score is
    within `margin` of the hit's and it is not itself one of the hits. `scope` says what a neighbour is:
    `adjacent` (the next or previous section) or `document` (any other section of the same document)."""
    related = _same_document if scope == "document" else _adjacent
    top = list(ranked[: max(1, top_k)])
    shown = {r.candidate.chunk_id for r in top}
    hits = []
    for r in top:
        hit = PolicyHit.from_metadata(r.candidate.metadata, r.candidate.text, r.score)
        for other in ranked:
            if other.score < r.score - margin:
                break  # `ranked` is best first: no closer neighbour follows
            cid = other.candidate.chunk_id
            if cid in shown or not related(r.candidate.chunk_id, cid):
                continue
            shown.add(cid)
            neighbour = PolicyHit.from_metadata(other.candidate.metadata, other.candidate.text, other.score)
            hit = hit.with_neighbour(neighbour)
            break
        hits.append(hit)
    return hits
