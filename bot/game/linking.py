"""Self-service account linking (DESIGN.md §11.4): the one-time codes a Discord user asks for with
`/link` and types in the game, the limits that make guessing them useless, `/unlink`, and what the
player is told — Korean first, English after.

A code is 10 characters from a 32-letter alphabet without look-alikes (no 0/O, 1/I): 50 bits, so a
guess succeeds about once in 10^15 tries, and a source or player that sends bad codes is stopped after a
few. It lives 10 minutes, works once, links only the Discord user who asked, and only its SHA-256 is
stored (`bot.store.link_codes`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.store import Store
from bot.store.link_codes import CodeRequest, failure_wait, record_failure, store_code, unlink_account
from bot.vocabulary.particles import particle

ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""Digits and capitals without 0, 1, I and O (they read alike)."""
CODE_LENGTH = 10
CODE_TTL = timedelta(minutes=10)
CODE_REQUESTS = 5
"""Codes one Discord user may ask for within `CODE_REQUEST_WINDOW`."""
CODE_REQUEST_WINDOW = timedelta(minutes=10)
BAD_CODES_PER_SOURCE = 100
"""Refused codes one sending address (the game's servers) may send within `BAD_CODE_WINDOW_S`; high,
because every player's typo comes from there too."""
BAD_CODES_PER_PLAYER = 5
"""Refused codes sent for one player within `BAD_CODE_WINDOW_S` (a player trying codes in the game)."""
BAD_CODE_WINDOW_S = 600.0


def new_code() -> str:
    """A fresh code, e.g. `7KQ9M-XR2TD` (the hyphen is for reading; it is ignored when typed)."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:5]}-{raw[5:]}"


def normalize(code: str) -> str:
    """What the player typed, as stored: capitals, without spaces and hyphens."""
    return "".join(ch for ch in code.upper() if ch not in " -")


def looks_like_code(code: str) -> bool:
    text = normalize(code)
    return len(text) == CODE_LENGTH and all(ch in ALPHABET for ch in text)


def code_hash(code: str) -> str:
    """SHA-256 hex of the normalized code: what `link_codes.code_hash` holds."""
    return hashlib.sha256(normalize(code).encode()).hexdigest()


class LinkGuard:
    """Counts refused link codes per sending address and per player in a sliding window, in the database
    (`bot.store.link_codes`), so every web process behind a load balancer counts the same guesses."""

    def __init__(
        self,
        store: Store,
        *,
        per_source: int = BAD_CODES_PER_SOURCE,
        per_player: int = BAD_CODES_PER_PLAYER,
        window: float = BAD_CODE_WINDOW_S,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._limits = {"source": per_source, "player": per_player}
        self.window = timedelta(seconds=window)
        self._clock = clock

    async def retry_after(self, source: str, player_id: str) -> float:
        """Seconds until link events from `source` for `player_id` are taken again (0: now)."""
        limits = {("source", source): self._limits["source"], ("player", player_id): self._limits["player"]}
        return await failure_wait(self._store, limits, self.window, self._clock())

    async def failed(self, source: str, player_id: str) -> None:
        """Count one refused code against the source and the player."""
        await record_failure(
            self._store, [("source", source), ("player", player_id)], self.window, self._clock()
        )


@dataclass(frozen=True)
class IssuedCode:
    """What `/link` shows: the code (only now, never again) and until when it works; or, when the user
    asked too often, how long to wait."""

    code: str | None
    expires_at: datetime | None
    retry_after: float = 0.0


async def request_code(store: Store, discord_id: str, thread_id: str, now: datetime) -> IssuedCode:
    """A new code for `discord_id` (their older codes stop working), unless they asked too often."""
    code = new_code()
    outcome: CodeRequest = await store_code(
        store,
        code_hash=code_hash(code),
        discord_id=discord_id,
        thread_id=thread_id,
        now=now,
        ttl=CODE_TTL,
        per_window=CODE_REQUESTS,
        window=CODE_REQUEST_WINDOW,
    )
    if not outcome.stored:
        return IssuedCode(None, None, outcome.retry_after)
    return IssuedCode(code, outcome.expires_at)


async def unlink(store: Store, discord_id: str) -> str | None:
    """Remove the Discord user's own link; the player it was linked to, or None."""
    return await unlink_account(store, discord_id)


# ---- what the player reads ----------------------------------------------------------------------


def code_text(issued: IssuedCode) -> str:
    """The ephemeral answer to `/link`: the code and how to use it, Korean first."""
    if issued.code is None:
        minutes = max(1, round(issued.retry_after / 60))
        return (
            f"⏳ 연동 코드를 너무 자주 요청했어요. {minutes}분 뒤에 다시 시도해 주세요.\n"
            f"You asked for link codes too often. Please try again in {minutes} min."
        )
    minutes = int(CODE_TTL.total_seconds() // 60)
    return (
        f"🔗 계정 연동 코드: **`{issued.code}`**\n"
        f"게임의 디스코드 계정 연동 화면에 이 코드를 입력하세요. {minutes}분 동안 한 번만 쓸 수 있으며, "
        "다른 사람에게 알려 주지 마세요.\n"
        f"Your account link code: **`{issued.code}`**\n"
        f"Enter it where the game asks for your Discord link code. It works once, for {minutes} minutes; "
        "do not share it."
    )


def linked_text(player_id: str) -> str:
    """The private message once the game redeemed the code."""
    return (
        f"✅ 디스코드 계정이 게임 계정 {player_id}에 연동되었어요. 이제 주문과 보상 문의를 도와드릴 수 있어요. "
        "연동을 해제하려면 `/unlink`를 입력하세요.\n"
        f"Your Discord account is now linked to game account {player_id}. To undo it, use `/unlink`."
    )


def linked_public_text(discord_id: str) -> str:
    """When no DM can be sent: said in the channel where the code was asked for, without the player id."""
    return f"<@{discord_id}> ✅ 계정 연동이 완료되었어요. / Your account link is complete."


def unlinked_text(player_id: str | None) -> str:
    if player_id is None:
        return "연동된 게임 계정이 없어요. / Your Discord account is not linked to a game account."
    return (
        f"🔓 게임 계정 {particle(player_id, '과/와')}의 연동을 해제했어요. 다시 연동하려면 `/link`를 입력하세요.\n"
        f"Your Discord account is no longer linked to game account {player_id}. Use `/link` to link again."
    )


NOT_IN_DISCORD = (
    "계정 연동 코드는 디스코드에서 `/link`로 받을 수 있어요. / Link codes are given by `/link` in Discord."
)
