"""What an answer's facts may stand on, gathered for one run: the thread's earlier player messages and tool
results (one indexed read after the tool loop), this turn's messages, and the bot's own fixed texts."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from bot.engine.results import StopReason
from bot.guards.dates import local_today
from bot.guards.evidence import catalogue_texts, rule_passages, rules_text
from bot.guards.output import FactContext
from bot.store import Store
from bot.vocabulary.language import detect_language

if TYPE_CHECKING:
    from bot.conversations.run_deps import RunDeps
    from bot.engine.results import AgentResult

log = logging.getLogger(__name__)

BOT_WRITTEN_STOPS = frozenset(
    {
        StopReason.MAX_ITERATIONS,
        StopReason.LLM_ERROR,
        StopReason.REPETITION,
        StopReason.BUDGET,
        StopReason.CANCELLED,
    }
)
"""Runs whose answer the bot wrote itself (`bot.engine.fallbacks`): its limits back the notice's numbers.
A parse failure's answer is the model's own text and is checked like any answer."""


@lru_cache(maxsize=1)
def _catalogue() -> tuple[str, ...]:
    return tuple(catalogue_texts())


PLAYER_KINDS = frozenset({"query", "interrupt"})
"""Thread message kinds the player wrote (`bot.memory` keeps the kind in `meta`)."""
OBSERVATION_KINDS = frozenset({"tool_result", "observation"})
"""Kinds that carry a tool's result (native mode: role `tool`; JSON mode: a user message)."""
HISTORY_ROWS = 400
"""How far back a thread is read for evidence."""


async def thread_evidence(
    store: Store, thread_id: str, limit: int = HISTORY_ROWS, *, run_id: str | None = None
) -> tuple[list[str], list[str]]:
    """(the player's messages, the tool results the model read) of the thread since its last `/thread
    reset`, oldest first: what an answer's facts may stand on besides the running turn. The results of
    run `run_id` (the running turn, already in the thread) are left out: they are the run's own outcomes,
    which the check weighs as this run's (a policy result's number is no earlier turn's fact)."""
    rows = await store.threads.since_reset(thread_id, limit)
    player: list[str] = []
    observations: list[str] = []
    for role, content, meta, row_run in rows:
        kind = meta.get("kind") if isinstance(meta, dict) else None
        if not content:
            continue
        if kind in PLAYER_KINDS:
            player.append(content)
        elif run_id is not None and row_run == run_id:
            continue
        elif role == "tool" or kind in OBSERVATION_KINDS:
            observations.append(content)
    return player, observations


def _today(deps: RunDeps) -> date:
    return local_today(deps.clock(), deps.services.timezone)


async def fact_context(
    deps: RunDeps,
    thread_id: str,
    *,
    run_id: str,
    query: str,
    result: AgentResult,
    notices: Iterable[str] = (),
) -> FactContext:
    try:
        players, observations = await thread_evidence(deps.store, thread_id, run_id=run_id)
    except Exception:  # without the history only this turn backs facts: stricter, never looser
        log.exception("could not read the thread's history for the fact check")
        players, observations = [], []
    today = _today(deps)
    fixed = [rules_text(deps.services.coupon_rules), *_catalogue(), today.isoformat()]
    if result.stopped_reason in BOT_WRITTEN_STOPS:
        fixed.append(result.answer)
    metrics: Any = deps.metrics
    return FactContext(
        player_texts=(*players, query, *result.injected),
        earlier_observations=tuple(observations),
        fixed_texts=tuple(fixed),
        mode=deps.fact_check,
        run_id=run_id,
        rules=tuple(rule_passages(deps.services.coupon_rules, detect_language(query))),
        on_withheld=getattr(metrics, "record_fact_withheld", None),
        notices=tuple(notices),
        today=today,
    )
