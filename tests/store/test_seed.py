from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from bot.store import ORDER_STATUSES, Order, Player, Store
from bot.store.seed import DEFAULT_SEED, SeedError, apply_seed, load_seed_file, seed_if_empty
from bot.vocabulary.language import has_hangul


def test_demo_seed_covers_every_order_status_with_enough_rows() -> None:
    seed = load_seed_file(DEFAULT_SEED)
    assert len(seed.players) >= 8
    assert len(seed.orders) >= 30
    assert {o.status for o in seed.orders} == set(ORDER_STATUSES)
    assert all(has_hangul(o.item) for o in seed.orders)


async def _counts(store: Store) -> tuple[int, int]:
    async with store.session() as s:
        players = (await s.execute(select(func.count()).select_from(Player))).scalar_one()
        orders = (await s.execute(select(func.count()).select_from(Order))).scalar_one()
    return players, orders


async def test_seeding_twice_changes_nothing(store: Store) -> None:
    seed = load_seed_file(DEFAULT_SEED)
    first = await apply_seed(store, seed)
    counts = await _counts(store)
    async with store.session() as s:
        before = [
            (o.id, o.status, o.updated_at)
            for o in (await s.execute(select(Order).order_by(Order.id))).scalars()
        ]
    second = await apply_seed(store, seed)
    async with store.session() as s:
        after = [
            (o.id, o.status, o.updated_at)
            for o in (await s.execute(select(Order).order_by(Order.id))).scalars()
        ]
    assert first.changed and not second.changed
    assert await _counts(store) == counts == (len(seed.players), len(seed.orders))
    assert before == after


async def test_seed_leaves_rows_changed_by_the_game_alone(store: Store) -> None:
    seed = load_seed_file(DEFAULT_SEED)
    await apply_seed(store, seed)
    async with store.session() as s, s.begin():
        order = (await s.execute(select(Order).where(Order.id == "ORD001"))).scalar_one()
        order.status = "delivered"
    await apply_seed(store, seed)
    async with store.session() as s:
        assert (await s.execute(select(Order.status).where(Order.id == "ORD001"))).scalar_one() == "delivered"


async def test_empty_database_is_seeded_automatically_once(store: Store) -> None:
    assert await seed_if_empty(store) is not None
    assert await seed_if_empty(store) is None


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (
            "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P1, status: lost}\n",
            4,
            "unknown status",
        ),
        (
            "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P9, status: paid}\n",
            4,
            "unknown player",
        ),
        ("players:\n  - {id: P1, name: a\n", 2, "invalid YAML"),  # where the unclosed { opens
        ("players:\n  - {id: P1, name: a}\n  - {id: P1, name: b}\n", 3, "duplicate player"),
        ("players:\n  - {id: P1, name: a, age: 3}\n", 2, "age"),
        (
            "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P1, status: paid, amount: -5}\n",
            4,
            "amount",
        ),
    ],
)
def test_malformed_seed_is_refused_with_file_and_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SeedError) as info:
        load_seed_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}:"), message
    assert fragment in message


async def test_malformed_seed_writes_nothing(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    data = yaml.safe_load(DEFAULT_SEED.read_text(encoding="utf-8"))
    data["orders"][-1]["status"] = "teleported"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SeedError):
        load_seed_file(path)
    assert await _counts(store) == (0, 0)
