"""Several bot processes: which Discord shards this process runs and which guilds / channels it owns.

Discord routes every event of a guild to shard `(guild_id >> 22) % shard_count` and DMs to shard 0,
so a conversation (`discord:<channel_id>`, the channel lives in one guild) only ever reaches the
process that runs that guild's shard: its run, interrupt queue and handoff cache stay in that process.
What every process shares goes through the database (PostgreSQL: ledger, memory, audit) and the
Chroma server, so exactly-once issuance holds across processes (tests/scale prove it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.config import Settings

DM_SHARD = 0
"""Discord delivers direct messages to shard 0 only."""


class ShardingError(ValueError):
    """The shard configuration is impossible; the message is one line for the operator."""


def shard_for_guild(guild_id: int, shard_count: int) -> int:
    """The shard Discord uses for `guild_id`: `(guild_id >> 22) % shard_count`."""
    if shard_count < 1:
        raise ShardingError(f"shard_count must be at least 1 (got {shard_count})")
    return (int(guild_id) >> 22) % shard_count


@dataclass(frozen=True)
class ShardPlan:
    """This process's share of the bot: `shard_count` shards in all, of which it runs `shard_ids`.

    `shard_count=None` is the single-process default: discord.py asks Discord how many shards to use
    and this process runs them all (and owns everything).
    """

    shard_count: int | None = None
    shard_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.shard_count is None:
            if self.shard_ids:
                raise ShardingError("ARCA_SHARD_IDS needs ARCA_SHARD_COUNT (the total number of shards)")
            return
        if self.shard_count < 1:
            raise ShardingError(f"ARCA_SHARD_COUNT must be at least 1 (got {self.shard_count})")
        bad = [i for i in self.shard_ids if not 0 <= i < self.shard_count]
        if bad:
            raise ShardingError(
                f"ARCA_SHARD_IDS: shard id {bad[0]} is outside 0..{self.shard_count - 1} "
                f"(ARCA_SHARD_COUNT={self.shard_count})"
            )
        if len(set(self.shard_ids)) != len(self.shard_ids):
            raise ShardingError("ARCA_SHARD_IDS lists a shard twice")

    @classmethod
    def from_settings(cls, settings: Settings) -> ShardPlan:
        return cls(shard_count=settings.shard_count, shard_ids=tuple(settings.shard_ids))

    @property
    def sharded(self) -> bool:
        """True when the shard count is fixed by configuration (several processes may split the work)."""
        return self.shard_count is not None

    @property
    def local_shards(self) -> tuple[int, ...]:
        """The shards this process runs (all of them when ARCA_SHARD_IDS is empty)."""
        if self.shard_count is None:
            return ()
        return self.shard_ids or tuple(range(self.shard_count))

    def owns_guild(self, guild_id: int) -> bool:
        """This process runs the shard that receives `guild_id`'s events."""
        if self.shard_count is None:
            return True
        return shard_for_guild(guild_id, self.shard_count) in self.local_shards

    def owns_message(self, guild_id: int | None) -> bool:
        """Whether a message from `guild_id` (None: a DM) is this process's to answer."""
        if guild_id is None:
            return self.shard_count is None or DM_SHARD in self.local_shards
        return self.owns_guild(guild_id)

    def client_options(self, *, auto_sharded: bool = False) -> dict[str, Any]:
        """Keyword arguments for the discord.py client of this process.

        `commands.Bot` / `discord.Client` runs one shard: `{"shard_id": i, "shard_count": n}`.
        `commands.AutoShardedBot` runs several: `{"shard_ids": [...], "shard_count": n}`.
        Unsharded: `{}` (discord.py's own default).
        """
        if self.shard_count is None:
            return {}
        if auto_sharded:
            return {"shard_count": self.shard_count, "shard_ids": list(self.local_shards)}
        if len(self.local_shards) != 1:
            raise ShardingError(
                f"this process would run shards {list(self.local_shards)}: with a plain discord client "
                "give one shard per process (ARCA_SHARD_IDS=<id>), or run an AutoShardedBot"
            )
        return {"shard_id": self.local_shards[0], "shard_count": self.shard_count}

    def describe(self) -> str:
        if self.shard_count is None:
            return "one process, shards chosen by Discord"
        return f"shards {list(self.local_shards)} of {self.shard_count}"


def deployment_warnings(settings: Settings) -> list[str]:
    """What breaks when several processes share the work with this configuration (empty when fine)."""
    plan = ShardPlan.from_settings(settings)
    if not plan.sharded or len(plan.local_shards) == plan.shard_count:
        return []
    warnings = []
    if not settings.db_url or settings.db_url.startswith("sqlite"):
        warnings.append(
            "several bot processes share one ledger: set ARCA_DB_URL to PostgreSQL "
            "(a SQLite file only works for processes on the same machine and serialises every write)"
        )
    if not settings.chroma_url:
        warnings.append(
            "several bot processes: set ARCA_CHROMA_URL to one Chroma server so `/policy reindex` "
            "reaches every process (each embedded index lives in its own data dir)"
        )
    return warnings
