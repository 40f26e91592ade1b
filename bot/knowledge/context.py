"""What the model is given for each hit: its section, plus one more section when that one scored close
(issue 24): by default the best other section of the same document when it ranks among the best
`FusionParams.neighbour_rank` (`FusionParams.neighbour_scope`; else only the next or previous section),
so a ranking that puts the section before or after the answering one, or a sibling section of the same
document, still hands the model the answering rule. A hit whose document has no such section gives its
place to the best section not yet shown, of any document (`fill`): the excerpts are the same size, and
a section the ranking put fourth beats one of the hit's document that it put twentieth.

At most one neighbour per hit, and none that is already a hit or another hit's neighbour: the excerpts
stay within today's top 3 plus one section each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from bot.knowledge.fusion import Ranked
from bot.knowledge.hits import PolicyHit


@lru_cache(maxsize=8192)
def section_position(chunk_id: str) -> tuple[str, int, int] | None:
    """(source, section index, part) of a chunk id `<source>#<section>.<part>`; None for another shape.
    Cached: a search compares its top hits with ~15 others, each time parsing the same few ids."""
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
    ranked: Sequence[Ranked],
    top_k: int,
    margin: float,
    *,
    scope: str = "adjacent",
    within: int | None = None,
    fill: bool = False,
) -> list[PolicyHit]:
    """The `top_k` best hits, each with its best-scoring neighbour when that neighbour's fused score is
    within `margin` of the hit's and it is not itself one of the hits. `scope` says what a neighbour is:
    `adjacent` (the next or previous section) or `document` (any other section of the same document);
    `within`: it must also rank among the first `within` of `ranked` (None: anywhere). `fill`: a hit
    without such a neighbour carries the best-ranked section not yet shown instead, of any document,
    when that one is within `margin` too."""
    related = _same_document if scope == "document" else _adjacent
    top = list(ranked[: max(1, top_k)])
    shown = {r.candidate.chunk_id for r in top}
    pool = ranked if within is None else ranked[: max(len(top), within)]
    hits = []
    for r in top:
        hit = PolicyHit.from_metadata(r.candidate.metadata, r.candidate.text, r.score)
        chosen = _first(pool, r, margin, shown, lambda cid, r=r: related(r.candidate.chunk_id, cid))
        if chosen is None and fill:
            chosen = _first(ranked, r, margin, shown, lambda cid: True)
        if chosen is not None:
            shown.add(chosen.candidate.chunk_id)
            c = chosen.candidate
            hit = hit.with_neighbour(PolicyHit.from_metadata(c.metadata, c.text, chosen.score))
        hits.append(hit)
    return hits


def _first(
    ranked: Sequence[Ranked], hit: Ranked, margin: float, shown: set[str], wanted: Callable[[str], bool]
) -> Ranked | None:
    """The best of `ranked` within `margin` of `hit`'s score that is not shown and is `wanted`."""
    for other in ranked:
        if other.score < hit.score - margin:
            return None  # `ranked` is best first: no closer one follows
        cid = other.candidate.chunk_id
        if cid not in shown and wanted(cid):
            return other
    return None
