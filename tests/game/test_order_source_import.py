"""`arca-bot orders import FILE`: a CSV or JSONL file is validated line by line (errors name file:line)
and imported whole in one transaction, or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.game.orders.importer import OrderFileError, import_orders
from bot.store import Order, Player, Store
from tests.support.replay import run_cli

HEADER = "id,player_id,status,item,amount,currency,ordered_at,updated_at\n"


async def _count(store: Store, table: type) -> int:
    async with store.session() as s:
        return int((await s.execute(select(func.count()).select_from(table))).scalar_one())


async def test_a_csv_is_imported_with_stub_players(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text(
        HEADER
        + "ORD900,P900,delayed,굿즈 세트,39000,KRW,2026-03-01T10:00:00+09:00,\n"
        + 'ORD901,P900,shipping,"머그컵, 2개",12000,,,\n',
        encoding="utf-8",
    )
    report = await import_orders(store, path)
    assert (report.orders, report.new_players) == (2, 1)
    got = await store.orders.get("ORD901")
    assert got is not None and (got.item, got.currency, got.status) == ("머그컵, 2개", "KRW", "shipping")


async def test_a_bad_line_imports_nothing_and_names_every_bad_line(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "orders.jsonl"
    good = {"id": "ORD900", "player_id": "P900", "status": "delayed", "item": "굿즈", "amount": 1000}
    lines = [
        json.dumps(good),
        "",
        json.dumps({**good, "id": "ORD901", "status": "lost"}),
        "{broken",
        json.dumps({**good, "id": "ORD902", "ordered_at": "2026-03-01 10:00"}),
        json.dumps(good),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(OrderFileError) as caught:
        await import_orders(store, path)
    text = str(caught.value)
    assert f"{path}:3: status" in text and f"{path}:4: not JSON" in text
    assert f"{path}:5: ordered_at" in text and f"{path}:6: id: ORD900 is already on line 1" in text
    assert await _count(store, Order) == 0 and await _count(store, Player) == 0


async def test_a_csv_with_a_wrong_header_is_refused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text("order,player\nORD1,P1\n", encoding="utf-8")
    with pytest.raises(OrderFileError, match=r"orders.csv:1: header: columns missing"):
        await import_orders(store, path)


@pytest.mark.slow
def test_the_cli_imports_and_refuses_under_the_http_source(tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text(HEADER + "ORD900,P900,delayed,굿즈,39000,KRW,,\n", encoding="utf-8")
    done = run_cli(["orders", "import", str(path)], tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "imported 1 order(s)" in done.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "ORD901,P900,delayed,굿즈,-5,KRW,,\n", encoding="utf-8")
    refused = run_cli(["orders", "import", str(bad)], tmp_path / "data")
    assert refused.returncode == 2 and f"{bad}:2: amount" in refused.stderr
    http = run_cli(
        ["orders", "import", str(path)],
        tmp_path / "data",
        ARCA_ORDER_SOURCE="http",
        ARCA_GAME_API_URL="http://127.0.0.1:9",
    )
    assert http.returncode == 2 and "builtin" in http.stderr
