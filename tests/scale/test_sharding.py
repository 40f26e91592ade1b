"""Sharding: which shards a process runs, which guilds and DMs it owns, and the discord.py options."""

from __future__ import annotations

import discord
import pytest
from discord.ext import commands
from hypothesis import given
from hypothesis import strategies as st

from bot.config import ConfigError, load_settings
from bot.sharding import ShardingError, ShardPlan, deployment_warnings, shard_for_guild

# A guild id is a snowflake: milliseconds since the Discord epoch live above bit 22.
GUILD_IDS = st.integers(min_value=1 << 22, max_value=(1 << 63) - 1)


def test_guild_shard_is_discords_formula() -> None:
    guild_id = 81384788765712384  # Discord API server, from Discord's documentation
    assert shard_for_guild(guild_id, 1) == 0
    assert shard_for_guild(guild_id, 16) == (guild_id >> 22) % 16
    assert shard_for_guild((5 << 22) | 0x3FFFFF, 4) == 1  # the low 22 bits never matter


@given(guild_id=GUILD_IDS, count=st.integers(min_value=1, max_value=64))
def test_every_guild_is_owned_by_exactly_one_process_when_each_runs_one_shard(
    guild_id: int, count: int
) -> None:
    owners = [i for i in range(count) if ShardPlan(count, (i,)).owns_guild(guild_id)]
    assert owners == [shard_for_guild(guild_id, count)]


@given(guild_id=GUILD_IDS)
def test_split_shard_sets_cover_every_guild_once(guild_id: int) -> None:
    plans = [ShardPlan(6, (0, 1, 2)), ShardPlan(6, (3, 4)), ShardPlan(6, (5,))]
    assert sum(p.owns_guild(guild_id) for p in plans) == 1


def test_direct_messages_belong_to_the_process_that_runs_shard_zero() -> None:
    assert ShardPlan(4, (0,)).owns_message(None)
    assert not ShardPlan(4, (1, 2, 3)).owns_message(None)
    assert ShardPlan().owns_message(None) and ShardPlan().owns_message(123 << 22)


def test_unsharded_plan_owns_everything_and_leaves_discord_py_defaults() -> None:
    plan = ShardPlan()
    assert not plan.sharded and plan.local_shards == () and plan.client_options() == {}
    assert plan.describe() == "one process, shards chosen by Discord"


@pytest.mark.parametrize(
    ("count", "ids", "message"),
    [
        (2, (2,), "outside 0..1"),
        (4, (-1,), "outside 0..3"),
        (4, (1, 1), "twice"),
        (None, (0,), "needs ARCA_SHARD_COUNT"),
        (0, (), "at least 1"),
    ],
)
def test_impossible_shard_plans_are_refused_with_one_line(count, ids, message) -> None:
    with pytest.raises(ShardingError, match=message) as info:
        ShardPlan(count, ids)
    assert "\n" not in str(info.value)


def test_settings_refuse_shard_ids_outside_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCA_SHARD_COUNT", "2")
    monkeypatch.setenv("ARCA_SHARD_IDS", "0,2")
    monkeypatch.setenv("DISCORD_TOKEN", "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value).startswith("ARCA_SHARD_IDS: shard id 2 is outside 0..1")
    assert "abcdefghijklmnop" not in str(info.value)


def test_settings_build_the_plan_of_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCA_SHARD_COUNT", "4")
    monkeypatch.setenv("ARCA_SHARD_IDS", "1; 3")
    plan = ShardPlan.from_settings(load_settings())
    assert plan == ShardPlan(4, (1, 3)) and plan.describe() == "shards [1, 3] of 4"


def test_one_shard_per_process_configures_a_plain_discord_bot() -> None:
    options = ShardPlan(4, (2,)).client_options()
    bot = commands.Bot(command_prefix="!", intents=discord.Intents.none(), **options)
    assert (bot.shard_id, bot.shard_count) == (2, 4)


def test_several_shards_in_one_process_configure_an_auto_sharded_bot() -> None:
    plan = ShardPlan(6, (3, 4))
    with pytest.raises(ShardingError, match="one shard per process"):
        plan.client_options()
    bot = commands.AutoShardedBot(
        command_prefix="!", intents=discord.Intents.none(), **plan.client_options(auto_sharded=True)
    )
    assert (bot.shard_ids, bot.shard_count) == ([3, 4], 6)


def test_all_shards_of_a_count_in_one_process() -> None:
    plan = ShardPlan(3)
    assert plan.local_shards == (0, 1, 2)
    assert plan.client_options(auto_sharded=True) == {"shard_count": 3, "shard_ids": [0, 1, 2]}


def test_split_deployment_on_sqlite_and_embedded_chroma_is_warned_about(tmp_path) -> None:
    settings = load_settings(ARCA_SHARD_COUNT=2, ARCA_SHARD_IDS="0", ARCA_DATA_DIR=str(tmp_path))
    warnings = deployment_warnings(settings)
    assert any("ARCA_DB_URL" in w for w in warnings) and any("ARCA_CHROMA_URL" in w for w in warnings)
    shared = load_settings(
        ARCA_SHARD_COUNT=2,
        ARCA_SHARD_IDS="0",
        ARCA_DB_URL="postgresql+asyncpg://bot@db/arca",
        ARCA_CHROMA_URL="http://chroma:8000",
    )
    assert deployment_warnings(shared) == []
    assert deployment_warnings(load_settings(ARCA_DATA_DIR=str(tmp_path))) == []
