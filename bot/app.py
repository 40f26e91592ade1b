"""Start-up assembly shared by every entry point: store (seeded when empty), policy index, tools,
staff commands and the `Conversations` object that every channel talks to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.heap import freeze_startup_heap
from bot.loop_share import share_the_gil
from bot.store import Store
from bot.store.seed import seed_if_empty

if TYPE_CHECKING:
    from bot.conversations.hooks import RunHooks

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[1]


async def open_store(settings: Settings, *, seed: bool = True) -> Store:
    """Open (creating if needed) the configured database; load the demo seed into an empty one."""
    store = Store(settings.database_url, game_delivery=settings.coupon_delivery == "game")
    await store.open()
    if seed:
        report = await seed_if_empty(store)
        if report is not None:
            log.info(
                "empty database seeded with the demo data: %s players, %s orders",
                report.players_added,
                report.orders_added,
            )
    return store


def policies_dir(settings: Settings) -> Path:
    """`ARCA_POLICIES_DIR` (default `policies/`); a relative default falls back to the project's own."""
    path = Path(settings.policies_dir)
    if path.is_dir() or path.is_absolute():
        return path
    return PROJECT_ROOT / path


def coupon_rules_path(settings: Settings) -> Path:
    return policies_dir(settings) / "coupon_rules.yaml"


class IndexBuildCancelled(Exception):
    """The process is stopping while the policy index is being built. The chunks already stored stay
    whole (each is written with its vector), and the next start's refresh embeds the rest."""


def make_policy_index(
    settings: Settings, *, build: bool = True, cancelled: Callable[[], bool] | None = None
) -> Any:
    """The policy index of the settings, built into the data dir when it is missing.

    `cancelled` is asked between embedding batches and before the warm-up (the steps that take
    seconds); when it says yes the build stops there with `IndexBuildCancelled`, so a server asked to
    stop does not exit while native code (the embedder, the analyzer) still runs in the build thread."""
    from bot.knowledge.index import PolicyIndex

    def checkpoint(*_progress: int) -> None:
        if cancelled is not None and cancelled():
            raise IndexBuildCancelled

    index = PolicyIndex.from_settings(settings, policies_dir=policies_dir(settings))
    if build:
        checkpoint()
        if index.is_built():
            # Bring an existing index up to date with the configured directory (changed sections
            # only are re-embedded; an unchanged directory costs a parse and a hash).
            counts = index.reindex(progress=checkpoint)
            if counts.added or counts.updated or counts.removed:
                log.info("policy index refreshed: %s", counts)
        else:
            index.ensure_built(index.policies_dir, progress=checkpoint)
        checkpoint()
        index.warm_up()
        from bot.guards.evidence import warm_policy_passages

        warm_policy_passages((hit.citation, hit.text) for hit in index.sections())
    return index


def make_policy_index_safely(settings: Settings, *, cancelled: Callable[[], bool] | None = None) -> Any:
    """The policy index; when it cannot be built (Chroma server down) the bot still serves orders and
    coupons, and `search_policy` answers that the knowledge base is unavailable. A build stopped by
    `cancelled` raises `IndexBuildCancelled`."""
    try:
        return make_policy_index(settings, cancelled=cancelled)
    except IndexBuildCancelled:
        raise
    except Exception as exc:
        log.error(
            "policy index unavailable (%s: %s); policy search is off until it is back",
            type(exc).__name__,
            exc,
        )
        from bot.knowledge.index import PolicyIndex

        return PolicyIndex.from_settings(settings, policies_dir=policies_dir(settings))


def _warn_of_unreachable_targets(settings: Settings, hours: Any) -> None:
    """Log, at start-up, an SLA target the staff hours cannot meet (also a `doctor` warning)."""
    from bot.analytics.staff_response import SlaTargets
    from bot.desk.sla import hours_problems

    for problem in hours_problems(hours, SlaTargets.from_settings(settings)):
        log.warning("%s (see docs/staff-hours.md)", problem)


def make_llm_factory(settings: Settings, metrics: Any = None) -> Callable[[], Any]:
    """One `OpenAILLM` for the main role per run (a new agent is built per run; the LLM is shared); it
    reports each call to `metrics`."""
    from bot.llm.registry import ModelRegistry, openai_factory

    registry = ModelRegistry.from_settings(settings, factory=partial(openai_factory, observer=metrics))
    main = registry.for_role("main")
    return lambda: main


def start_metrics(settings: Settings) -> tuple[Any, Any]:
    """Process metrics (and the `/metrics` endpoint when `ARCA_METRICS_PORT` is set); errors are counted."""
    from bot.observability import ErrorCountingHandler, metrics_from_settings
    from bot.sharding import deployment_warnings

    metrics, server = metrics_from_settings(settings)
    logging.getLogger().addHandler(ErrorCountingHandler(metrics))
    for warning in deployment_warnings(settings):
        log.warning("%s", warning)
    return metrics, server


def staff_commands(settings: Settings | None = None) -> list[Any]:
    """Every staff command: the staff layer's own (`bot.staff`), `/stats` over the configured
    conversation windows, `/console` linking to the configured web server, and the ops ones (`bot.ops.commands`)."""
    from bot.ops.commands import ops_commands
    from bot.staff import default_commands
    from bot.staff.console import console_base_url, console_command
    from bot.staff.incidents import incident_commands
    from bot.staff.replies import reply_commands
    from bot.staff.stats import stats_command

    console = console_command() if settings is None else console_command(console_base_url(settings))
    stats = (
        stats_command()
        if settings is None
        else stats_command(
            idle_minutes=settings.conversation_idle_minutes,
            resolution_window_minutes=settings.resolution_window_minutes,
            zone=settings.tz,
        )
    )
    return [*default_commands(), stats, console, *ops_commands(), *incident_commands(), *reply_commands()]


@dataclass
class App:
    settings: Settings
    store: Store
    conversations: Any
    policy_index: Any


async def build_app(
    settings: Settings,
    *,
    llm_factory: Callable[[], Any] | None = None,
    store: Store | None = None,
    policy_index: Any = None,
    clock: Callable[[], datetime] | None = None,
    use_native_tools: bool | None = None,
    hooks: Sequence[RunHooks] = (),
    metrics: Any = None,
    coupon_rules: Any = None,
    models: Any = None,
) -> App:
    """Everything a channel needs. `llm_factory` defaults to the configured model (metered when
    `metrics`, a `bot.observability.ArcaMetrics`, is given); `coupon_rules` replaces the configured
    `coupon_rules.yaml` (a transcript's own rules); `models` (a `ModelRegistry`) picks the model of
    each `/ops draft` step, by default the configured ones when no `llm_factory` is given."""
    from bot.attachments import AttachmentBox
    from bot.conversations import Conversations
    from bot.conversations.hooks import MetricsHooks
    from bot.conversations.notifications import StaffNotifications
    from bot.conversations.run_events import RunEvents
    from bot.desk.hours import SupportHours
    from bot.game.orders import make_order_source
    from bot.staff import StaffRegistry
    from tools.base import ToolServices
    from tools.coupon_rules import load_coupon_rules
    from tools.registry import build_registry

    hours = SupportHours.from_settings(settings)  # a configuration error before the database is touched
    _warn_of_unreachable_targets(settings, hours)
    store = store or await open_store(settings)
    if policy_index is None:
        policy_index = make_policy_index_safely(settings)
    if coupon_rules is None:
        coupon_rules = load_coupon_rules(coupon_rules_path(settings))
    notifications = StaffNotifications()
    services = ToolServices(
        coupon_rules=coupon_rules,
        policy_search=policy_index,
        timezone=settings.timezone,
        notify_staff=notifications.notify,
        away_notice=hours.notice,
        orders=make_order_source(settings, store),
    )
    if models is None and llm_factory is None and settings.llm_configured:
        from bot.llm.registry import ModelRegistry

        # Per-step models for `/ops draft` (planner on `fast`, worker and review on `main`).
        models = ModelRegistry.from_settings(settings)
    conversations = Conversations(
        store=store,
        tools=build_registry(),
        llm_factory=llm_factory or make_llm_factory(settings, metrics),
        services=services,
        staff=StaffRegistry(staff_commands(settings)),
        staff_role=settings.staff_role,
        use_native_tools=True if use_native_tools is None else use_native_tools,
        max_iterations=settings.max_iterations,
        run_budget_s=settings.run_budget_s,
        llm_concurrency=settings.llm_concurrency,
        edit_interval=settings.edit_interval,
        max_message_chars=settings.max_message_chars,
        clock=clock,
        notifications=notifications,
        hooks=(*hooks, *(() if metrics is None else (MetricsHooks(metrics),))),
        run_events=RunEvents(),
        metrics=metrics,
        models=models,
        fact_check=settings.fact_check,
        attachments=AttachmentBox(
            store,
            settings.data_dir / "attachments",
            max_bytes=settings.attachment_max_bytes,
            unsent_files=settings.attachment_unsent_files,
            unsent_bytes=settings.attachment_unsent_bytes,
            unsent_ttl=timedelta(minutes=settings.attachment_unsent_minutes),
            max_pixels=settings.attachment_max_pixels,
            clock=clock,
        ),
    )
    conversations.deps = replace(conversations.deps, quirks=settings.guard_quirks())
    freeze_startup_heap()
    share_the_gil()
    return App(settings=settings, store=store, conversations=conversations, policy_index=policy_index)
