"""The simulated player: scripted (fixed or conditional lines; deterministic, for CI) or played by a model
on any OpenAI-compatible endpoint, from the scenario's description. Either one says its next message or
stops: its goal was met, it gave up, or it had nothing more to say."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from bot.llm.base import LLMError, Usage
from bot.simulate.scenario import ScriptedLine, SimPlayer

DONE = "DONE"
GIVE_UP = "GIVE_UP"


@dataclass(frozen=True)
class Exchange:
    """One player message and what the bot answered (its answer, or the reply a command got)."""

    said: str
    answer: str


@dataclass(frozen=True)
class Move:
    """The player's next message, or (`text` None) why they stopped: `done`, `gave up`, `no more lines`."""

    text: str | None
    stopped: str = ""


class SimulatedPlayer(Protocol):
    usage: Usage

    async def next_move(self, history: list[Exchange]) -> Move: ...


class ScriptedPlayer:
    """Says `player.turns` in order; a line with `if_bot_says` only when the bot's last answer contains
    one of those texts (else it is skipped). Stops when the lines run out."""

    def __init__(self, player: SimPlayer) -> None:
        self._lines: list[ScriptedLine] = list(player.turns)
        if player.opening and (not self._lines or self._lines[0].say != player.opening):
            self._lines.insert(0, ScriptedLine(say=player.opening))
        self._at = 0
        self.usage = Usage()

    async def next_move(self, history: list[Exchange]) -> Move:
        last = history[-1].answer if history else ""
        while self._at < len(self._lines):
            line = self._lines[self._at]
            self._at += 1
            if line.if_bot_says is None or any(t in last for t in line.if_bot_says):
                return Move(line.say)
        return Move(None, "no more lines")


_LANGUAGE = {"ko": "Korean (한국어)", "en": "English"}
GREETING = {
    "ko": "안녕하세요, 아르카 온라인 고객지원 봇입니다. 무엇을 도와드릴까요?",
    "en": "Hello, this is the Arca Online support bot. How can I help you?",
}
"""The bot's first words, as the simulated player sees the chat open."""


def persona_prompt(player: SimPlayer) -> str:
    """The system prompt of the model that plays the player."""
    lines = [
        "You are role-playing a player of the online game Arca Online (아르카 온라인) who is chatting with "
        "the game's support bot. Stay in character; you are the player, never the bot.",
        f"Write in {_LANGUAGE[player.language]}. Your manner: {player.manner}.",
        f"What you want: {player.wants}",
    ]
    if player.knows:
        lines.append("What you know and can say when it helps or you are asked: " + "; ".join(player.knows))
    if player.must_not_reveal:
        lines.append("Never reveal: " + "; ".join(player.must_not_reveal))
    lines += [
        f"You give up {player.gives_up}.",
        "Write only your next chat message: one to three short sentences, no quotes, no name before it.",
        f"When what you want has been done (or clearly refused for a good reason you accept), write exactly {DONE}.",
        f"When you give up, write exactly {GIVE_UP}.",
    ]
    return "\n".join(lines)


_PREFIX = re.compile(r"^\s*(?:player|플레이어|me|나)\s*[:：]\s*", re.IGNORECASE)


def _clean(text: str) -> str:
    text = _PREFIX.sub("", text.strip())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return text


class ModelPlayer:
    """A model plays the player: the bot's answers are its `user` turns, its own messages `assistant`."""

    def __init__(self, player: SimPlayer, llm: Any) -> None:
        self.player = player
        self.llm = llm
        self.usage = Usage()
        self._opened = False

    async def next_move(self, history: list[Exchange]) -> Move:
        if not history and self.player.opening and not self._opened:
            self._opened = True
            return Move(self.player.opening)
        messages: list[dict[str, Any]] = [{"role": "system", "content": persona_prompt(self.player)}]
        # The chat opens with the bot's greeting: seen live, a 1.5B model told only "write your first
        # message" answered as the support agent ("I'm sorry to hear that your account…").
        messages.append({"role": "user", "content": GREETING[self.player.language]})
        for ex in history:
            messages.append({"role": "assistant", "content": ex.said})
            messages.append({"role": "user", "content": ex.answer or "(no answer)"})
        try:
            result = await self.llm.chat(messages, purpose="simulated_player")
        except LLMError as exc:
            return Move(None, f"the player's model failed: {exc}")
        self.usage.add(result.usage)
        text = _clean(result.content or "")
        if not text:
            return Move(None, "the player's model said nothing")
        head = text.split()[0].strip(".!").upper()
        if head == DONE:
            return Move(None, "done")
        if head == GIVE_UP:
            return Move(None, "gave up")
        return Move(text)


_VERDICT = re.compile(r"\b(YES|NO)\b", re.IGNORECASE)


async def judge(llm: Any, line: str, history: list[Exchange], usage: Usage) -> bool | None:
    """Whether the bot's side of the conversation satisfies a rubric `line` (None: no verdict read)."""
    talk = "\n".join(f"PLAYER: {ex.said}\nBOT: {ex.answer}" for ex in history)
    messages = [
        {
            "role": "system",
            "content": "You grade a support bot's conversation. Read it, then answer only YES or NO.",
        },
        {
            "role": "user",
            "content": f"Conversation:\n{talk}\n\nIs this true of the BOT's messages: {line}\nAnswer YES or NO.",
        },
    ]
    try:
        result = await llm.chat(messages, purpose="simulation_judge")
    except LLMError:
        return None
    usage.add(result.usage)
    match = _VERDICT.search(result.content or "")
    return None if match is None else match.group(1).upper() == "YES"
