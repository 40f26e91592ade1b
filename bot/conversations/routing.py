"""`Conversations`: channel → thread_id, one run per thread, interrupt routing.

Every channel (Discord, console, transcript replay) hands its messages to `Conversations.handle`;
no behaviour lives only in a channel adapter. A message that arrives while its thread is running
becomes an interrupt (acknowledged with 👀); one the run did not drain starts the next run. The input
guard's verdict and the message's files are `intake`'s, staff command lines `staff_lines`', and a
thread held by (or asked of) a person `handoff`'s.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bot.attachments import AttachmentBox
from bot.conversations import handoff, intake
from bot.conversations.hooks import RunHooks
from bot.conversations.messages import (
    ACK_EMOJI,
    STOPPED_TEXT,
    Incoming,
    TurnOutcome,
    failure_text,
)
from bot.conversations.notifications import StaffNotifications
from bot.conversations.run import RunState, answer
from bot.conversations.run_deps import LLMFactory, RunDeps
from bot.conversations.run_events import RunEvents
from bot.conversations.staff_lines import StaffCommands, audit_refused, run_command
from bot.conversations.surface import Surface, SurfaceError
from bot.desk.person_request import PersonRequest
from bot.engine.interrupts import InterruptQueue
from bot.engine.results import AgentResult
from bot.loop_share import give_way
from bot.memory import ThreadMemory
from bot.persona import SUPPORT_SYSTEM_PROMPT
from bot.store import Store
from bot.vocabulary.language import detect_language
from tools.base import Actor, StaffNotifier, ToolRegistry, ToolServices

__all__ = ["Conversations", "LLMFactory", "StaffCommands"]

log = logging.getLogger(__name__)

ASKERS_KEPT = 10_000
"""Threads whose latest asker `Conversations.asker_of` remembers (the oldest are forgotten first)."""


class _FromDeps:
    """A read-only attribute of `Conversations` kept in its `RunDeps`: channels and runs read one value."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj.deps, self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.name} belongs to the runs' deps: replace `Conversations.deps` instead")


class Conversations:
    """The one object every channel talks to. Construct once per process."""

    def __init__(
        self,
        *,
        store: Store,
        tools: ToolRegistry,
        llm_factory: LLMFactory,
        services: ToolServices,
        memory: ThreadMemory | None = None,
        staff: StaffCommands | None = None,
        staff_role: str = "Support Staff",
        use_native_tools: bool = True,
        max_iterations: int = 50,
        run_budget_s: float = 90.0,
        llm_concurrency: int = 8,
        edit_interval: float = 1.0,
        max_message_chars: int = 4000,
        system_prompt: str = SUPPORT_SYSTEM_PROMPT,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
        notifications: StaffNotifications | None = None,
        run_events: RunEvents | None = None,
        metrics: Any = None,
        models: Any = None,
        fact_check: str = "enforce",
        attachments: AttachmentBox | None = None,
        hooks: Sequence[RunHooks] = (),
    ) -> None:
        self.staff = staff
        self.staff_role = staff_role
        self.max_message_chars = max_message_chars
        self.new_id = new_id or (lambda: uuid.uuid4().hex[:12])
        self.staff_notifications = notifications or StaffNotifications()
        self.models = models
        """A `ModelRegistry` for per-step models (`/ops draft`); None: every step uses `llm_factory`."""
        self._runs: dict[str, RunState] = {}
        self._askers: OrderedDict[str, str] = OrderedDict()
        if services.notify_staff is None:
            services = replace(services, notify_staff=self.staff_notifications.notify)
        self.deps = RunDeps(
            store=store,
            tools=tools,
            services=services,
            llm_factory=llm_factory,
            memory=memory or ThreadMemory(store),
            clock=clock or (lambda: datetime.now(UTC)),
            system_prompt=system_prompt,
            use_native_tools=use_native_tools,
            max_iterations=max_iterations,
            run_budget_s=run_budget_s,
            edit_interval=edit_interval,
            fact_check=fact_check,
            attachments=attachments or AttachmentBox(store),
            llm_slots=asyncio.Semaphore(llm_concurrency),
            run_events=run_events or RunEvents(),
            metrics=metrics,
            hooks=tuple(hooks),
        )
        """What every run of this process reads (built once; a test swaps it with `dataclasses.replace`)."""

    store = _FromDeps()
    tools = _FromDeps()
    services = _FromDeps()
    llm_factory = _FromDeps()
    memory = _FromDeps()
    attachments = _FromDeps()
    clock = _FromDeps()
    system_prompt = _FromDeps()
    use_native_tools = _FromDeps()
    max_iterations = _FromDeps()
    run_budget_s = _FromDeps()
    edit_interval = _FromDeps()
    fact_check = _FromDeps()
    llm_slots = _FromDeps()
    run_events = _FromDeps()
    metrics = _FromDeps()
    run_starts = _FromDeps()
    engine_steps = _FromDeps()

    # ---- identities ----------------------------------------------------------------------

    async def resolve_actor(
        self,
        discord_id: str | None,
        roles: frozenset[str] | set[str] = frozenset(),
        display_name: str | None = None,
    ) -> Actor:
        """Authority comes from Discord roles and the account link only, never from message text."""
        player_id = None if discord_id is None else await self.store.players.id_for_discord(str(discord_id))
        roles = frozenset(roles)
        return Actor(
            discord_id=None if discord_id is None else str(discord_id),
            player_id=player_id,
            roles=roles,
            is_staff=self.staff_role in roles,
            display_name=display_name,
        )

    # ---- staff notifications -------------------------------------------------------------

    async def notify_staff(self, kind: str, payload: dict[str, Any]) -> None:
        """Escalations and approval requests: kept, and posted by every channel that listens."""
        await self.staff_notifications.notify(kind, payload)

    @property
    def staff_sinks(self) -> list[StaffNotifier]:
        """Where staff notifications are posted; a channel adds its own while it runs."""
        return self.staff_notifications.sinks

    @property
    def notifications(self) -> deque[tuple[str, dict[str, Any]]]:
        """The recent staff notifications, oldest first."""
        return self.staff_notifications.recent

    # ---- watchers ------------------------------------------------------------------------

    def watch(self, thread_id: str, hooks: RunHooks) -> AbstractContextManager[None]:
        """`hooks` watch `thread_id`'s runs that start inside the block, and `/ops draft` typed in the
        thread gives them its agent's events (replay's turn). The process's `hooks` never see those."""
        return self.deps.watchers.watch(thread_id, hooks)

    # ---- state ---------------------------------------------------------------------------

    def is_running(self, thread_id: str) -> bool:
        return thread_id in self._runs

    def asker_of(self, thread_id: str) -> str | None:
        """The audit label of the latest person whose message this process took in the thread (answered,
        queued or stored during a handoff): who the conversation is with before any run of it is recorded."""
        return self._askers.get(thread_id)

    def _remember_asker(self, thread_id: str, actor: Actor) -> None:
        self._askers[thread_id] = actor.label
        self._askers.move_to_end(thread_id)
        if len(self._askers) > ASKERS_KEPT:
            self._askers.popitem(last=False)

    async def is_paused(self, thread_id: str) -> bool:
        return await handoff.is_paused(self.deps, thread_id)

    async def set_handoff(self, thread_id: str, paused: bool, *, by: str) -> None:
        await handoff.set_paused(self.deps, thread_id, paused, by=by)

    async def stop(self, thread_id: str) -> bool:
        """Cancel the thread's run (if any). Its history stays valid (see ThreadMemory.load)."""
        state = self._runs.get(thread_id)
        if state is None or state.task is None or state.task.done():
            return False
        state.stopped = True
        state.queue.request_stop()
        state.task.cancel()
        return True

    async def wait_idle(self, thread_id: str | None = None) -> None:
        """Wait until the thread (or every thread) has no run (tests, shutdown)."""
        while True:
            states = [self._runs[thread_id]] if thread_id in self._runs else []
            if thread_id is None:
                states = list(self._runs.values())
            tasks = [s.task for s in states if s.task is not None]
            if not states:
                return
            if tasks:
                await asyncio.wait(tasks)
            await asyncio.sleep(0)

    # ---- the entry point -----------------------------------------------------------------

    async def handle(self, incoming: Incoming, surface: Surface) -> TurnOutcome:
        """Route one channel message: refuse, run a staff command, store (handoff), queue, or run."""
        await give_way()  # messages that arrive together are taken in over the loop's turns
        verdict = await intake.judge(self.deps, incoming, max_chars=self.max_message_chars)
        if intake.refuses(verdict, incoming):
            await audit_refused(self.staff, incoming, self)
            await self._send_safely(surface, verdict.reply)
            return TurnOutcome(kind="refused", refusal_code=verdict.reason_code)
        text = verdict.cleaned_text
        command = await run_command(self.staff, incoming, text, self)
        if command is not None:
            await self._send_safely(surface, command.reply.text, ephemeral=True)
            return command
        text, images = await intake.with_files(
            self.deps, incoming, text, reply=lambda line: self._send_safely(surface, line)
        )
        if not text.strip():
            return TurnOutcome(kind="refused", refusal_code="EMPTY")
        incoming = Incoming(
            incoming.thread_id, incoming.actor, text, incoming.ref, verdict.untrusted, images=images
        )
        self._remember_asker(incoming.thread_id, incoming.actor)
        to_person = await handoff.to_person(self.deps, incoming, self.new_id)
        if to_person is not None:
            if to_person.answer is not None:
                await self._send_safely(surface, to_person.answer)
            return to_person
        state = self._runs.get(incoming.thread_id)
        if state is not None:
            if incoming.actor == state.actor:
                state.trust.untrusted = state.trust.untrusted or verdict.untrusted
                if verdict.untrusted:
                    state.untrusted_texts.add(text)
                state.queue.put(text)
            else:
                state.later.append((incoming, surface))
            await self._react_safely(surface, incoming.ref)
            return TurnOutcome(kind="queued")
        return await self._serve(incoming, surface)

    async def request_person(self, thread_id: str, actor: Actor, text: str) -> PersonRequest:
        """Escalate `thread_id` for `actor` at once (the words "상담원 연결" or the person button) and keep
        the request and the notice in the thread's memory."""
        return await handoff.request_person(self.deps, thread_id, actor, text, run_id=self.new_id())

    async def _serve(self, incoming: Incoming, surface: Surface) -> TurnOutcome:
        """Run the thread until nothing is left: leftovers start the next run, never dropped."""
        thread_id = incoming.thread_id
        state = RunState(actor=incoming.actor, queue=InterruptQueue(), images=incoming.images)
        self._runs[thread_id] = state
        outcome = TurnOutcome(kind="answered")
        query: str | None = incoming.text
        untrusted = incoming.untrusted
        try:
            while True:
                while query is not None:
                    state.run_id = self.new_id()
                    task = asyncio.create_task(answer(self.deps, state, thread_id, query, surface, untrusted))
                    state.task = task
                    await asyncio.wait({task})
                    if task.cancelled() or state.stopped:
                        outcome.kind = "stopped"
                        await self._after_stop(state, thread_id, surface)
                        return outcome
                    exc = task.exception()
                    if exc is not None:
                        outcome.kind = "failed"
                        log.error("run failed on %s", thread_id, exc_info=exc)
                        await self._send_safely(surface, failure_text(detect_language(query)))
                        leftovers = state.leftovers()
                    else:
                        result: AgentResult = task.result()
                        outcome.runs.append(result)
                        # What the guard let through, never the model's raw text (an answer can be withheld whole).
                        delivered = result.delivered_answer
                        outcome.answer = delivered if delivered is not None else result.answer
                        leftovers = state.leftovers(result)
                    query = "\n".join(leftovers) if leftovers else None
                    untrusted = any(text in state.untrusted_texts for text in leftovers)
                if not state.later:
                    return outcome
                # Someone else spoke in the channel meanwhile: their own run, their own identity.
                nxt, nxt_surface = state.later.pop(0)
                state.actor = nxt.actor
                surface = nxt_surface
                query, untrusted, state.images = nxt.text, nxt.untrusted, nxt.images
        finally:
            # No await between the last drain above and this line: a message cannot slip between.
            self._runs.pop(thread_id, None)

    async def _after_stop(self, state: RunState, thread_id: str, surface: Surface) -> None:
        """Keep what the player wrote (history) even though the run was stopped."""
        for text in state.leftovers():
            await self.memory.append(thread_id, {"role": "user", "content": text}, run_id=state.run_id)
        for other, _ in state.later:
            await self.memory.append(thread_id, {"role": "user", "content": other.text}, run_id=None)
        state.later.clear()
        await self._send_safely(surface, STOPPED_TEXT)

    def tools_for(self, actor: Actor) -> ToolRegistry:
        """The tools a run for `actor` sees (`RunDeps.tools_for`)."""
        return self.deps.tools_for(actor)

    async def _send_safely(self, surface: Surface, text: str, *, ephemeral: bool = False) -> None:
        try:
            await (surface.ephemeral(text) if ephemeral else surface.notice(text))
        except SurfaceError:
            log.exception("could not deliver a reply")

    async def _react_safely(self, surface: Surface, ref: Any) -> None:
        try:
            await surface.react(ref, ACK_EMOJI)
        except SurfaceError:
            log.warning("could not acknowledge an interrupt")
