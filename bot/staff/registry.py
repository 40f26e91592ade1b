"""The staff command registry and its text form (DESIGN.md §8): one definition per command, parsed,
role-checked, run and audited here; the console, transcripts and the Discord Cog all dispatch through it
(the console and transcripts as text lines, `dispatch`; Discord with its typed options, `dispatch_values`).

The role is checked before the arguments are parsed; non-staff get a clear denial and the attempt is
audited.
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.vocabulary import Locale, ThreadId, detect_language
from bot.vocabulary.particles import particle
from tools.base import Actor

if TYPE_CHECKING:
    from bot.conversations import Conversations

log = logging.getLogger(__name__)

MAX_COMMAND_HEAD = 200
"""Characters of a refused line read to tell which staff command it names."""
MAX_AUDITED_TARGET = 100
"""Characters of the first argument kept in the audit row."""


@dataclass(frozen=True)
class Param:
    """One positional parameter; `kind` is the type its text is parsed into (`str` or `int`)."""

    name: str
    kind: type = str
    optional: bool = False
    help: str = ""
    channel: bool = False
    """An optional `[channel]`: defaults to the channel the command is typed in."""
    minimum: int | None = None
    """For `int`: the smallest value accepted."""
    complete: Callable[[Any, str], Awaitable[list[str]]] | None = None
    """Values to suggest while it is typed, `(conversations, typed) -> values` (Discord's autocomplete)."""


@dataclass
class StaffReply:
    text: str
    ok: bool = True
    denied: bool = False
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Invocation:
    actor: Actor
    channel: str
    """thread_id of the channel the command was typed in."""
    conversations: Conversations
    command: StaffCommand
    progress: Callable[[str], Any] | None = None
    """A channel's live progress sink: long commands (`/ops draft`) report each step's line to it."""
    text: str = ""
    """What the staff member typed: the command line, or the text of a slash command's options."""
    on_card: bool = False
    """A staff-channel card's button runs the command and the card shows its outcome: the command's own
    staff notice says so (`on_card` in its payload), so the staff channel gets no second card."""
    shows_delivery: bool = False
    """Sent from a page that lists each staff reply's delivery (the console's conversation page): a staff
    reply is queued for every thread kind, so one no process posts is shown there as not delivered."""

    @property
    def locale(self) -> Locale:
        """The invocation's language: Hangul in what was typed → `ko`, anything else → `en`."""
        return detect_language(self.text)


Handler = Callable[[Invocation, dict[str, Any]], Awaitable[StaffReply]]


@dataclass(frozen=True)
class StaffCommand:
    name: str
    """Words after the slash: `coupon issue`, `order`."""
    params: tuple[Param, ...]
    help: str
    handler: Handler
    staff_only: bool = True
    open_without_args: bool = False
    """Any member may run it with no argument (a player's self-service form, `/link`); with arguments
    it stays staff-only, checked before they are read."""
    slow: bool = False
    """It may take longer than Discord's 3 s answer window (embedding, reindexing, an LLM run)."""

    @property
    def usage(self) -> str:
        parts = [f"/{self.name}"]
        for p in self.params:
            parts.append(f"[{p.name}]" if p.optional else f"<{p.name}>")
        return " ".join(parts)

    def staff_only_for(self, given: bool) -> bool:
        """Whether running it needs the staff role, `given` arguments or not."""
        return self.staff_only and not (self.open_without_args and not given)

    @property
    def group(self) -> str | None:
        return self.name.split(" ", 1)[0] if " " in self.name else None

    @property
    def leaf(self) -> str:
        return self.name.split(" ", 1)[-1]


class ArgumentError(ValueError):
    pass


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


_WHOLE_NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)")
"""ASCII digits, optionally grouped by thousands (`5,000`); `5,0,0,0` and `²³` are not numbers."""


def parse_int(param: Param, raw: str, cmd: StaffCommand) -> int:
    digits = raw.strip().removesuffix("원").removesuffix("KRW").strip()
    if not _WHOLE_NUMBER.fullmatch(digits):
        raise ArgumentError(
            f"<{param.name}> must be a whole number, e.g. 5000 (got {raw!r}). Usage: {cmd.usage}"
        )
    value = int(digits.replace(",", ""))
    if param.minimum is not None and value < param.minimum:
        raise ArgumentError(
            f"<{param.name}> must be at least {param.minimum} (got {raw!r}). Usage: {cmd.usage}"
        )
    return value


def _next_token(rest: str, pos: int) -> tuple[str | None, int]:
    """The next shell-style word of `rest` from `pos` (quotes group words) and where the word ends."""
    lexer = shlex.shlex(rest[pos:], posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        token = lexer.get_token()
    except ValueError as exc:  # an unclosed quote
        raise ArgumentError(str(exc)) from exc
    if token is None or token == lexer.eof:
        return None, len(rest)
    return token, pos + lexer.instream.tell()


def parse_args(cmd: StaffCommand, rest: str, channel: str) -> dict[str, Any]:
    """Positional arguments; the last parameter takes the rest of the line (quotes optional)."""
    values: dict[str, Any] = {}
    pos = 0
    params = list(cmd.params)
    for i, p in enumerate(params):
        remaining = rest[pos:].strip()
        if not remaining:
            raw = None
        elif i == len(params) - 1:
            raw = _unquote(remaining)
            pos = len(rest)
        else:
            raw, pos = _next_token(rest, pos)
        if raw is None or raw == "":
            if p.channel:
                values[p.name] = channel
                continue
            if p.optional:
                values[p.name] = None
                continue
            raise ArgumentError(f"missing <{p.name}>. Usage: {cmd.usage}")
        if p.kind is int:
            values[p.name] = parse_int(p, raw, cmd)
        elif p.channel:
            values[p.name] = resolve_channel(raw, channel)
        else:
            values[p.name] = raw
    if pos < len(rest) and rest[pos:].strip():
        raise ArgumentError(f"too many arguments. Usage: {cmd.usage}")
    return values


def check_values(cmd: StaffCommand, values: dict[str, Any], channel: str) -> dict[str, Any]:
    """Typed options (a Discord slash command's): the same rules as `parse_args` without a text line to
    read — a missing required value, an `int` below its minimum, an omitted `[channel]` (this one)."""
    unknown = set(values) - {p.name for p in cmd.params}
    if unknown:
        raise ArgumentError(f"unknown option(s) {sorted(unknown)}. Usage: {cmd.usage}")
    checked: dict[str, Any] = {}
    for p in cmd.params:
        value = values.get(p.name)
        if isinstance(value, str):
            value = value.strip()
        if value is None or value == "":
            if p.channel:
                checked[p.name] = channel
            elif p.optional:
                checked[p.name] = None
            else:
                raise ArgumentError(f"missing <{p.name}>. Usage: {cmd.usage}")
        elif p.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ArgumentError(f"<{p.name}> must be a whole number, e.g. 5000. Usage: {cmd.usage}")
            if p.minimum is not None and value < p.minimum:
                raise ArgumentError(
                    f"<{p.name}> must be at least {p.minimum} (got {value}). Usage: {cmd.usage}"
                )
            checked[p.name] = value
        elif p.channel:
            checked[p.name] = resolve_channel(str(value), channel)
        else:
            checked[p.name] = str(value)
    return checked


def resolve_channel(raw: str, current: str) -> str:
    """`<#123>` or `123` → `discord:123`; `kind:name` as is; a bare name → same kind as the current channel."""
    m = re.fullmatch(r"<#([0-9]+)>", raw.strip())
    if m:
        return ThreadId.discord(m.group(1))
    if ":" in raw:
        return raw.strip()
    kind = ThreadId(current).kind
    if raw.isascii() and raw.isdigit() and kind in ("discord", "dm"):
        return ThreadId.discord(raw)
    return f"{kind}:{raw.strip()}"


def command_name(text: str) -> str:
    """`coupon issue` for `/coupon issue ORD001 …` (the first two words), for audit rows of denials."""
    return " ".join(text.strip().lstrip("/").split(None, 2)[:2]) or "?"


class StaffRegistry:
    """All staff commands; `dispatch` is the text form used by the console and transcripts."""

    def __init__(self, commands: list[StaffCommand]) -> None:
        self.commands: dict[str, StaffCommand] = {}
        for c in commands:
            self.add(c)

    def add(self, cmd: StaffCommand) -> None:
        if cmd.name in self.commands:
            raise ValueError(f"staff command {cmd.name} defined twice")
        self.commands[cmd.name] = cmd

    def find(self, text: str) -> tuple[StaffCommand | None, str, str | None]:
        """(command, rest of line, group name when only a group matched)."""
        body = text.strip()[1:]
        words = body.split(None, 2)
        if not words:
            return None, "", None
        if len(words) >= 2 and f"{words[0]} {words[1]}" in self.commands:
            cmd = self.commands[f"{words[0]} {words[1]}"]
            rest = body.split(None, 2)[2] if len(words) > 2 else ""
            return cmd, rest, None
        if words[0] in self.commands:
            rest = body[len(words[0]) :].strip()
            return self.commands[words[0]], rest, None
        if any(c.group == words[0] for c in self.commands.values()):
            return None, "", words[0]
        return None, "", None

    def matches(self, text: str) -> bool:
        """A line is a staff command when it starts with `/` and names a known command or group."""
        if not text.lstrip().startswith("/"):
            return False
        cmd, _, group = self.find(text)
        return cmd is not None or group is not None

    async def dispatch(
        self, text: str, *, actor: Actor, channel: str, conversations: Conversations
    ) -> StaffReply:
        """A text line (the console, transcripts, a command typed into a Discord channel)."""
        cmd, rest, group = self.find(text)
        name = cmd.name if cmd else (group or text.split()[0].lstrip("/"))
        if (cmd is None or cmd.staff_only_for(bool(rest.strip()))) and not actor.is_staff:
            # The role is checked before the arguments are parsed, and the attempt is audited.
            return await _deny(conversations, actor=actor, channel=channel, name=name)
        if cmd is None:
            subs = ", ".join(c.usage for c in self.commands.values() if c.group == group)
            return StaffReply(f"알 수 없는 하위 명령입니다. 사용법 / usage: {subs}", ok=False)
        try:
            args = parse_args(cmd, rest, channel)
        except ArgumentError as exc:
            return StaffReply(f"⚠ {exc}", ok=False)
        inv = Invocation(actor=actor, channel=channel, conversations=conversations, command=cmd, text=text)
        return await _run(inv, args)

    async def dispatch_values(
        self,
        cmd: StaffCommand,
        values: dict[str, Any],
        *,
        actor: Actor,
        channel: str,
        conversations: Conversations,
        on_card: bool = False,
        shows_delivery: bool = False,
    ) -> StaffReply:
        """A command whose options arrived typed (Discord's slash options, e.g. `amount` as an `int`; a
        card's button, `on_card`; a console page's form, `shows_delivery`): the same role check, audit and
        reply as `dispatch`, and the values reach the handler as given."""
        given = any(v is not None and str(v).strip() != "" for v in values.values())
        if cmd.staff_only_for(given) and not actor.is_staff:
            return await _deny(conversations, actor=actor, channel=channel, name=cmd.name)
        try:
            args = check_values(cmd, values, channel)
        except ArgumentError as exc:
            return StaffReply(f"⚠ {exc}", ok=False)
        typed = " ".join(str(v) for v in args.values() if isinstance(v, str))
        inv = Invocation(
            actor=actor,
            channel=channel,
            conversations=conversations,
            command=cmd,
            text=typed,
            on_card=on_card,
            shows_delivery=shows_delivery,
        )
        return await _run(inv, args)

    async def audit_refused_line(
        self, text: str, *, actor: Actor, channel: str, conversations: Conversations
    ) -> bool:
        """A non-staff line refused before dispatch (e.g. too long) that names a staff command is still
        a denied staff attempt, audited as such. True when it was one."""
        head = text.lstrip()[:MAX_COMMAND_HEAD]
        if actor.is_staff or not self.matches(head):
            return False
        cmd, _, group = self.find(head)
        name = cmd.name if cmd else (group or command_name(head))
        await _audit_denied(conversations, actor=actor, channel=channel, name=name)
        return True


async def _run(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    """Run the handler on checked arguments and audit the outcome."""
    cmd = inv.command
    try:
        reply = await cmd.handler(inv, args)
    except Exception:  # a broken command is reported to the staff member, not swallowed
        log.exception("staff command /%s failed", cmd.name)
        # The exception's name and text go to the log, not to the staff member (they can quote input).
        reply = StaffReply(
            f"⚠ /{cmd.name} 명령을 처리하지 못했습니다. 자세한 내용은 서버 로그에 있습니다. / "
            f"/{cmd.name} failed; the details are in the server log.",
            ok=False,
        )
    await inv.conversations.store.audit(
        actor=inv.actor.label,
        action=f"staff./{cmd.name}",
        thread_id=inv.channel,
        target=str(next(iter(args.values()), "") or "")[:MAX_AUDITED_TARGET],
        code="OK" if reply.ok else "ERROR",
    )
    return reply


async def _deny(conversations: Any, *, actor: Actor, channel: str, name: str) -> StaffReply:
    """The clear denial a non-staff member gets; the attempt is audited."""
    await _audit_denied(conversations, actor=actor, channel=channel, name=name)
    return StaffReply(
        f"⛔ {particle('/' + name, '은/는')} 운영진({conversations.staff_role}) 전용 명령입니다. "
        f"This command is for staff ({conversations.staff_role}) only.",
        ok=False,
        denied=True,
    )


async def _audit_denied(conversations: Any, *, actor: Actor, channel: str, name: str) -> None:
    await conversations.store.audit(
        actor=actor.label, action="staff.denied", thread_id=channel, target=f"/{name}", code="DENIED"
    )
