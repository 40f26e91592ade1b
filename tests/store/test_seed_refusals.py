"""`seed --file` problems are one line naming file and line, exit 2; seeding stays idempotent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from bot.cli import main
from bot.store import Coupon, Order, Player, Store
from bot.store.seed import DEFAULT_SEED, SeedError, apply_seed, load_seed_file
from tests.support.store import sqlite_url
from tools.order_views import normalize_order_id

HUGE = "99999999999999999999999"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(d))
    return d


def _write(tmp_path: Path, text: str, name: str = "seed.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _seed_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["seed", "--file", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "Event loop is closed" not in captured.err
    return status, captured.err.strip()


def test_a_discord_id_already_linked_to_another_player_is_refused_with_its_line(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["seed"]) == 0  # P100 is linked to Discord 9001
    path = _write(tmp_path, "players:\n  - {id: P1, name: a}\n  - {id: P2, discord_id: '9001', name: b}\n")
    status, err = _seed_cli(path, capsys)
    assert status == 2
    assert err.startswith(
        f"arca-bot: {path}:3: players.1.discord_id: Discord id 9001 is already linked to P100"
    )
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        (
            f"players:\n  - {{id: P1, name: a}}\norders:\n  - {{id: O1, player_id: P1, status: paid, amount: {HUGE}}}\n",
            4,
            "orders.0.amount",
        ),
        (
            "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P1, status: delayed}\n"
            f"coupons:\n  - {{order_id: O1, amount: {HUGE}}}\n",
            6,
            "coupons.0.amount",
        ),
    ],
)
def test_an_amount_that_does_not_fit_is_refused_with_its_line(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, key: str
) -> None:
    path = _write(tmp_path, text)
    status, err = _seed_cli(path, capsys)
    assert status == 2
    assert err.startswith(f"arca-bot: {path}:{line}: {key}:"), err


@pytest.mark.parametrize("raw", ["ord-low", " ORDSP ", "\tord-Mixed9 "])
async def test_order_ids_are_stored_exactly_as_the_tools_read_them(
    store: Store, tmp_path: Path, raw: str
) -> None:
    path = _write(
        tmp_path,
        yaml.safe_dump(
            {
                "players": [{"id": " P1 ", "name": "a", "discord_id": " 9001 "}],
                "orders": [{"id": raw, "player_id": "P1", "status": "delayed"}],
                "coupons": [{"order_id": raw, "amount": 1000, "status": "revoked"}],
            }
        ),
    )
    await apply_seed(store, load_seed_file(path))
    async with store.session() as s:
        assert list((await s.execute(select(Order.id))).scalars()) == [normalize_order_id(raw)]
        assert list((await s.execute(select(Player.id, Player.discord_id))).all()) == [("P1", "9001")]
        assert list((await s.execute(select(Coupon.order_id))).scalars()) == [normalize_order_id(raw)]


def test_two_ids_the_tools_would_read_as_one_are_a_duplicate(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "players:\n  - {id: P1, name: a}\norders:\n  - {id: ord-1, player_id: P1, status: paid}\n"
        "  - {id: ' ORD-1', player_id: P1, status: paid}\n",
    )
    with pytest.raises(SeedError, match=rf"{path}:5: orders.1.id: duplicate order id 'ORD-1'"):
        load_seed_file(path)


def test_a_discord_id_must_be_ascii_digits(tmp_path: Path) -> None:
    path = _write(tmp_path, "players:\n  - {id: P1, name: a, discord_id: '９００１'}\n")
    with pytest.raises(SeedError, match=rf"{path}:2: players.0.discord_id"):
        load_seed_file(path)


def test_a_seed_coupon_above_the_staff_maximum_is_refused(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P1, status: delayed}\n"
        "coupons:\n  - {order_id: O1, amount: 100001}\n",
    )
    status, err = _seed_cli(path, capsys)
    assert status == 2
    assert err.startswith(
        f"arca-bot: {path}:6: coupons.0.amount: 100,001 is above staff_max_amount (100,000)"
    ), err


async def test_seeding_a_revoked_coupon_without_a_code_three_times_makes_one_row(
    store: Store, tmp_path: Path
) -> None:
    path = _write(
        tmp_path,
        "players:\n  - {id: P1, name: a}\norders:\n  - {id: O1, player_id: P1, status: delayed}\n"
        "coupons:\n  - {order_id: O1, amount: 5000, status: revoked}\n"
        "  - {order_id: O1, amount: 5000, status: revoked}\n",  # two identical rows are two coupons
    )
    for _ in range(3):
        await apply_seed(store, load_seed_file(path))
    async with store.session() as s:
        assert (await s.execute(select(func.count()).select_from(Coupon))).scalar_one() == 2


def test_a_10000_line_seed_file_loads_in_a_few_seconds(tmp_path: Path) -> None:
    lines = ["players:"] + [
        f"  - {{id: P{i}, name: player{i}, discord_id: '{10_000 + i}'}}" for i in range(5_000)
    ]
    lines += ["orders:"] + [
        f"  - {{id: O{i}, player_id: P{i}, status: paid, amount: {i}}}" for i in range(5_000)
    ]
    path = _write(tmp_path, "\n".join(lines) + "\n  - {id: O1, player_id: P1, status: lost}\n")
    started = time.process_time()  # CPU time: other processes on the machine do not count
    with pytest.raises(SeedError, match=rf"{path}:10003: orders.5000.status"):
        load_seed_file(path)  # the line of an error near the end is still found
    assert time.process_time() - started < 4.0  # was ~14 s: two pure-Python parses, quadratic checks


def test_the_seed_file_is_parsed_once_with_the_c_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed with the module-level pure-Python helpers")

    monkeypatch.setattr(yaml, "safe_load", refuse)
    monkeypatch.setattr(yaml, "compose", refuse)
    path = _write(tmp_path, "players:\n  - {id: P1, name: a}\n")
    assert load_seed_file(path).players[0].id == "P1"


def test_seed_on_a_read_only_data_dir_is_one_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bot.doctor

    data_dir.mkdir()
    real_access = bot.doctor.os.access
    # The tests run as root, who may write anywhere: the data dir is made read-only for os.access only.
    monkeypatch.setattr(bot.doctor.os, "access", lambda p, mode: Path(p) != data_dir and real_access(p, mode))
    status, err = _seed_cli(DEFAULT_SEED, capsys)
    assert (status, err) == (2, f"arca-bot: ARCA_DATA_DIR: {data_dir} is not writable")


def test_a_database_that_refuses_writes_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arca.db"
    monkeypatch.setenv("ARCA_DB_URL", sqlite_url(db))
    assert main(["seed"]) == 0
    monkeypatch.setenv("ARCA_DB_URL", f"sqlite+aiosqlite:///file:{db}?mode=ro&uri=true")
    path = _write(tmp_path, "players:\n  - {id: PZ, name: z}\n")
    capsys.readouterr()
    status, err = _seed_cli(path, capsys)
    assert status == 2
    assert err.startswith("arca-bot: cannot write to database") and "readonly" in err, err
    assert len(err.splitlines()) == 1
