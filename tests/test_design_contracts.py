"""The fixed names of DESIGN.md, asserted against the real code.

Everything written in `code` in DESIGN.md (tool and argument names, result codes, order statuses and
their Korean labels, staff commands and their parameters, transcript keys and step kinds, CLI
subcommands and flags, env vars, thread id formats, engine event types and payload fields) is a
contract that outside test suites depend on. Each test here fails when one of those names drifts.
No model and no policy index are used: the whole file runs in a few seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import io
import json
import os
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any, get_args

import pytest

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------------
# §5 tools
# ---------------------------------------------------------------------------------------------

# tool → (argument names in order, required arguments); DESIGN.md §5 table.
DESIGN_TOOLS: dict[str, tuple[list[str], set[str]]] = {
    "lookup_order": (["order_id"], {"order_id"}),
    "list_my_orders": (["status"], set()),
    "issue_coupon": (["order_id", "amount", "reason"], {"order_id", "amount"}),
    "search_policy": (["query", "top_k"], {"query"}),
    "escalate_to_staff": (["summary"], {"summary"}),
}

DESIGN_RESULT_CODES = [
    "OK",
    "ISSUED",
    "ORDER_NOT_FOUND",
    "NOT_LINKED",
    "NOT_ELIGIBLE_STATUS",
    "INVALID_AMOUNT",
    "AMOUNT_OVER_LIMIT",
    "ALREADY_ISSUED",
    "DAILY_LIMIT_REACHED",
    "PENDING_APPROVAL",
    "DENIED",
    "ERROR",
    "SOURCE_UNAVAILABLE",  # §11, wave 4
]

DESIGN_ORDER_STATUSES = {
    "paid": "결제 완료",
    "preparing": "상품 준비 중",
    "shipping": "배송 중",
    "delayed": "배송 지연",
    "delivered": "배송 완료",
    "cancelled": "주문 취소",
    "refunded": "환불 완료",
}


def _registry():
    from tools.registry import build_registry

    return build_registry()


INCIDENT_TOOLS = {"incident_status"}
"""Issue 25 adds the incident state tool (allowed unlinked) beside the tools of DESIGN §5."""


def test_registry_has_exactly_the_design_tools() -> None:
    names = [n for n in _registry().names if n not in INCIDENT_TOOLS]
    assert sorted(names) == sorted(DESIGN_TOOLS), (
        f"DESIGN §5 tools are {sorted(DESIGN_TOOLS)}; build_registry() registers {sorted(names)}"
    )


@pytest.mark.parametrize("tool_name", sorted(DESIGN_TOOLS))
def test_tool_schema_argument_names(tool_name: str) -> None:
    t = _registry().get(tool_name)
    assert t is not None, f"tool {tool_name} missing from build_registry()"
    fn = t.openai_schema()["function"]
    assert fn["name"] == tool_name
    assert fn.get("description"), f"{tool_name}: the docstring is the model's instructions"
    expected_args, _ = DESIGN_TOOLS[tool_name]
    schema_props = list(fn["parameters"]["properties"])
    assert schema_props == expected_args, (
        f"{tool_name}: DESIGN §5 arguments {expected_args}; native schema has {schema_props}"
    )
    json_props = list(t.args_model.model_json_schema()["properties"])
    assert json_props == expected_args, f"{tool_name}: JSON-mode arguments {json_props}"
    for arg in expected_args:
        desc = fn["parameters"]["properties"][arg].get("description")
        assert desc, f"{tool_name}.{arg} needs a description (it is the schema the model sees)"


@pytest.mark.parametrize("tool_name", sorted(DESIGN_TOOLS))
def test_tool_optional_arguments_are_optional_in_the_args_model(tool_name: str) -> None:
    t = _registry().get(tool_name)
    assert t is not None
    _, required = DESIGN_TOOLS[tool_name]
    model_required = {n for n, f in t.args_model.model_fields.items() if f.is_required()}
    assert model_required == required, (
        f"{tool_name}: DESIGN §5 requires {sorted(required)}; the argument model requires {sorted(model_required)}"
    )
    json_required = set(t.args_model.model_json_schema().get("required", []))
    assert json_required == required, f"{tool_name}: JSON-mode schema requires {sorted(json_required)}"


@pytest.mark.parametrize("tool_name", sorted(DESIGN_TOOLS))
def test_tool_optional_arguments_are_optional_in_the_native_schema(tool_name: str) -> None:
    """The `tools=[…]` schema the model sees in native mode must not demand optional arguments."""
    t = _registry().get(tool_name)
    assert t is not None
    _, required = DESIGN_TOOLS[tool_name]
    params = t.openai_schema()["function"]["parameters"]
    native_required = set(params.get("required", []))
    extra = sorted(native_required - required)
    assert native_required == required, (
        f"DESIGN §5 mismatch: {tool_name} argument(s) {extra} are optional (DESIGN: `status` optional, "
        f"`reason` optional, `top_k` default 3), but the native-mode schema from Tool.openai_schema() "
        f"(tools/base.py: openai.pydantic_function_tool with `strict` popped) lists "
        f"required={sorted(native_required)}, so the model is told it must send them; "
        f"the JSON-mode prompt (model_json_schema) says required={sorted(required)}"
    )


def test_search_policy_top_k_defaults_to_3() -> None:
    t = _registry().get("search_policy")
    assert t is not None
    assert t.args_model.model_fields["top_k"].default == 3
    assert t.args_model.model_validate({"query": "쿠폰"}).top_k == 3


def test_argument_models_carry_types_only() -> None:
    """`amount` is a plain int: ranges are checked by the guard, so the model gets a reason."""
    t = _registry().get("issue_coupon")
    assert t is not None
    amount = t.openai_schema()["function"]["parameters"]["properties"]["amount"]
    assert amount.get("type") == "integer"
    for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        assert bound not in amount, f"issue_coupon.amount carries a range ({bound}) in its schema"
    # an out-of-range amount validates, so the guard (not pydantic) answers
    t.args_model.model_validate({"order_id": "ORD001", "amount": -5})
    t.args_model.model_validate({"order_id": "ORD001", "amount": 10**9})


def test_side_effect_tools() -> None:
    reg = _registry()
    flagged = {t.name for t in reg if t.side_effect}
    assert flagged == {"issue_coupon", "escalate_to_staff"}, f"side_effect=True tools: {sorted(flagged)}"


def test_result_codes() -> None:
    from tools.base import ResultCode

    members = [m.name for m in ResultCode]
    assert members == DESIGN_RESULT_CODES, f"ResultCode members {members}"
    for name in DESIGN_RESULT_CODES:
        assert ResultCode[name].value == name
        assert ResultCode[name] == name  # codes compare equal to their strings


def test_tool_result_and_context_fields() -> None:
    from tools.base import Actor, ToolContext, ToolResult

    assert [f.name for f in dataclasses.fields(ToolResult)][:4] == ["ok", "code", "message", "data"]
    ctx_fields = {f.name for f in dataclasses.fields(ToolContext)}
    assert {"actor", "thread_id", "locale", "store", "clock", "run_id", "tool_call_id"} <= ctx_fields
    actor_fields = {f.name for f in dataclasses.fields(Actor)}
    assert {"player_id", "discord_id", "roles"} <= actor_fields
    ctx = ToolContext(actor=Actor("9001", "P100"), thread_id="discord:1", run_id="r1", store=None).for_call(
        "call_7"
    )
    key = ctx.idempotency_key
    assert "discord:1" in key and "r1" in key and "call_7" in key, f"idempotency key {key!r}"


def test_unlinked_allowlist_and_denied() -> None:
    import asyncio

    from tools.base import Actor, ResultCode, ToolContext

    reg = _registry()
    unlinked = Actor("777")
    assert {t.name for t in reg if reg.allowed(t.name, unlinked)} == {
        "search_policy",
        "escalate_to_staff",
        *INCIDENT_TOOLS,
    }
    ctx = ToolContext(actor=unlinked, thread_id="discord:1", run_id="r", store=None, locale="en")
    result = asyncio.run(reg.execute("issue_coupon", {"order_id": "ORD001", "amount": 1000}, ctx))
    assert result.code == ResultCode.DENIED
    assert not result.ok
    assert "link" in result.message.lower(), "a DENIED result says how to get access"


def test_order_statuses_and_korean_labels() -> None:
    from bot.store import ORDER_STATUSES

    assert dict(ORDER_STATUSES) == DESIGN_ORDER_STATUSES
    assert list(ORDER_STATUSES) == list(DESIGN_ORDER_STATUSES)


def test_amount_formatting() -> None:
    from tools.money import format_krw

    assert format_krw(20000, "ko") == "20,000원"
    assert format_krw(20000, "en") == "20,000 KRW"


def test_conversation_language_detection() -> None:
    from bot.vocabulary import detect_language

    assert detect_language("배송이 늦어요") == "ko"
    assert detect_language("where is my order") == "en"


async def test_lookup_order_message_names_id_item_amount_status(seeded_store: Any) -> None:
    from tools.base import Actor, ResultCode, ToolContext

    reg = _registry()
    ctx = ToolContext(
        actor=Actor("9001", "P100"), thread_id="console:t", run_id="r", store=seeded_store, locale="ko"
    ).for_call("c1")
    res = await reg.execute("lookup_order", {"order_id": "ORD001"}, ctx)
    assert res.code == ResultCode.OK
    for part in ("ORD001", "한정판 굿즈 세트", "39,000원", "delayed", "배송 지연"):
        assert part in res.message, f"lookup_order message lacks {part!r}: {res.message}"
    # another player's order answers exactly like a missing one
    other = await reg.execute("lookup_order", {"order_id": "ORD003"}, ctx.for_call("c2"))
    missing = await reg.execute("lookup_order", {"order_id": "ORD999"}, ctx.for_call("c3"))
    assert other.code == missing.code == ResultCode.ORDER_NOT_FOUND
    assert other.message.replace("ORD003", "X") == missing.message.replace("ORD999", "X")


def test_coupon_rules_file_names_and_defaults() -> None:
    from tools.coupon_rules import CouponRules, load_coupon_rules

    expected = {
        "eligible_statuses": ["delayed"],
        "min_amount": 1_000,
        "max_amount": 20_000,
        "amount_step": 1_000,
        "staff_max_amount": 100_000,
        "valid_days": 30,
    }
    rules = load_coupon_rules()
    defaults = CouponRules()
    for key, value in expected.items():
        assert getattr(rules, key) == value, f"policies/coupon_rules.yaml {key}={getattr(rules, key)}"
        assert getattr(defaults, key) == value, f"CouponRules default {key}={getattr(defaults, key)}"
    assert (rules.daily_max_count, rules.daily_max_amount) == (3, 50_000)
    assert rules.approval_threshold is None
    assert (ROOT / "policies" / "coupon_rules.yaml").is_file()


# ---------------------------------------------------------------------------------------------
# §8 staff commands
# ---------------------------------------------------------------------------------------------

# command → [(param, optional)], DESIGN.md §8, in order.
DESIGN_STAFF: dict[str, list[tuple[str, bool]]] = {
    "order": [("order_id", False)],
    "orders": [("player_id", False)],
    "coupon issue": [("order_id", False), ("amount", False), ("reason", True)],
    "coupon revoke": [("order_id", False), ("reason", True)],
    "coupon approve": [("order_id", False)],
    "coupon list": [("player_id", True)],
    "link": [("discord_user_id", True), ("player_id", True)],  # §11.4: without them, a member's own code
    "thread show": [("channel", True)],
    "thread reset": [("channel", True)],
    "policy search": [("query", False)],
    "policy reindex": [],
    "audit": [("limit", True)],
    "handoff": [("channel", True)],
    "resume": [("channel", True)],
    "stop": [("channel", True)],
    "stats": [("days", True)],
    "console": [],
}
INCIDENT_STAFF = {
    f"incident {a}" for a in ("open", "update", "close", "list", "show", "report", "compensate")
}
"""DESIGN §8 wave 3: `/incident open|update|close|list|show|report …`, `/incident compensate <id> …`."""
SAVED_REPLY_STAFF = {"reply", "replies save", "replies delete"}  # §8 wave 3: `/reply <name>`
LINKING = {"unlink"}  # §11.4: a member's `/unlink` (not staff-only)
ALLOWED_EXTRA_STAFF = {"ops draft", "ops show", *INCIDENT_STAFF, *SAVED_REPLY_STAFF, *LINKING}


def _staff():
    from bot.app import staff_commands
    from bot.staff import StaffRegistry

    return StaffRegistry(staff_commands())


def test_staff_command_names() -> None:
    names = set(_staff().commands)
    missing = set(DESIGN_STAFF) - names
    extra = names - set(DESIGN_STAFF) - ALLOWED_EXTRA_STAFF
    assert not missing, f"DESIGN §8 commands missing: {sorted(missing)}"
    assert not extra, f"staff commands not in DESIGN §8: {sorted(extra)}"


@pytest.mark.parametrize("name", sorted(DESIGN_STAFF))
def test_staff_command_parameters(name: str) -> None:
    cmd = _staff().commands[name]
    got = [(p.name, p.optional) for p in cmd.params]
    assert got == DESIGN_STAFF[name], f"/{name}: DESIGN §8 {DESIGN_STAFF[name]}, code {got}"
    assert cmd.staff_only, f"/{name} must be staff-only"
    if name == "coupon issue":
        assert cmd.params[1].kind is int, "/coupon issue <amount> is an integer (KRW)"
    if name == "audit":
        assert cmd.params[0].kind is int
    for p in cmd.params:
        if p.name == "channel":
            assert p.channel, f"/{name} [channel] must default to the current channel"


def test_staff_usage_strings() -> None:
    cmds = _staff().commands
    assert cmds["coupon issue"].usage == "/coupon issue <order_id> <amount> [reason]"
    assert cmds["link"].usage == "/link [discord_user_id] [player_id]"
    assert cmds["link"].open_without_args, "§11.4: `/link` without arguments is any member's"
    assert not cmds["unlink"].staff_only
    assert cmds["thread show"].usage == "/thread show [channel]"


def test_staff_text_form_parsing() -> None:
    from bot.staff import parse_args

    cmds = _staff().commands
    # the last parameter takes the rest of the line, quotes optional
    args = parse_args(cmds["coupon issue"], "ORD001 5000 배송 지연 사과", "console:main")
    assert args == {"order_id": "ORD001", "amount": 5000, "reason": "배송 지연 사과"}
    args = parse_args(cmds["coupon issue"], 'ORD001 5000 "사과 보상"', "console:main")
    assert args["reason"] == "사과 보상"
    args = parse_args(cmds["policy search"], "쿠폰 한도 얼마", "console:main")
    assert args == {"query": "쿠폰 한도 얼마"}
    # an optional [channel] defaults to the channel the command is typed in
    assert parse_args(cmds["handoff"], "", "discord:123") == {"channel": "discord:123"}
    assert parse_args(cmds["coupon list"], "", "discord:123") == {"player_id": None}


# ---------------------------------------------------------------------------------------------
# §9 / §10 CLI
# ---------------------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("arca-bot has no subcommands")


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


def test_cli_subcommands_and_flags() -> None:
    from bot.cli import build_parser

    subs = _subcommands(build_parser())
    for name in ("chat", "replay", "index", "search", "demo"):
        assert name in subs, f"`arca-bot {name}` missing; subcommands: {sorted(subs)}"
    assert {"--mode", "--live", "--trials", "--report", "-k"} <= _options(subs["replay"])
    assert "--policies" in _options(subs["index"])
    assert {"--top-k", "--json"} <= _options(subs["search"])
    assert {"--as", "--staff", "--channel"} <= _options(subs["chat"])


def test_cli_replay_arguments() -> None:
    from bot.cli import build_parser

    parser = build_parser()
    ns = parser.parse_args(["replay", "a.yaml", "dir/"])
    assert ns.paths == ["a.yaml", "dir/"]
    assert ns.mode == "both", "--mode defaults to both"
    assert not ns.live
    ns = parser.parse_args(
        ["replay", "x.yaml", "--mode", "json", "--live", "--trials", "3", "--report", "r.json", "-k", "limit"]
    )
    assert (ns.mode, ns.live, ns.trials, ns.report, ns.k) == ("json", True, 3, "r.json", "limit")
    for mode in ("native", "json", "both"):
        assert parser.parse_args(["replay", "x", "--mode", mode]).mode == mode
    with pytest.raises(SystemExit):
        parser.parse_args(["replay", "x", "--mode", "stream"])
    with pytest.raises(SystemExit):
        parser.parse_args(["replay"])  # PATH… is required


def test_cli_index_search_chat_arguments() -> None:
    from bot.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["index", "--policies", "pol/"]).policies == "pol/"
    assert parser.parse_args(["index"]).policies is None
    ns = parser.parse_args(["search", "쿠폰 한도", "--top-k", "5", "--json"])
    assert (ns.query, ns.top_k, ns.json) == ("쿠폰 한도", 5, True)
    ns = parser.parse_args(["search", "refund"])
    assert ns.json is False
    ns = parser.parse_args(["chat", "--as", "9002", "--staff", "--channel", "lobby"])
    assert (ns.as_id, ns.staff, ns.channel) == ("9002", True, "lobby")


def test_console_script_and_module_entry() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["scripts"]["arca-bot"] == "bot.cli:main"
    main_src = (ROOT / "bot" / "__main__.py").read_text(encoding="utf-8")
    assert "bot.cli" in main_src and "main" in main_src, "python -m bot must run bot.cli:main"


def test_replay_invalid_transcript_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: broken\nturns:\n  - user: hi\n    expect: {tools: [a], bogus_key: 1}\n", "utf-8")
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:4" in err, f"invalid transcript must name file and line: {err!r}"


def test_search_json_prints_one_array_with_design_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import load_settings
    from bot.knowledge import commands
    from bot.knowledge.index import PolicyHit

    hit = PolicyHit(
        source="compensation.md",
        doc_id="compensation",
        title="보상 정책",
        section="2. 발급 한도",
        score=0.91,
        text="1회 최대 20,000원",
        lang="ko",
    )

    class FakeIndex:
        def loading(self, _query: str, *, analyzer: bool = True) -> contextlib.nullcontext[None]:
            return contextlib.nullcontext()

        def ensure_built(self, _dir: Any) -> None:
            return None

        def read_chunks(self) -> None:
            return None

        def search_sync(self, query: str, top_k: int = 3) -> list[PolicyHit]:
            return [hit][:top_k]

        def close(self) -> None:
            pass

    monkeypatch.setattr(commands.PolicyIndex, "from_settings", classmethod(lambda cls, s: FakeIndex()))
    out = io.StringIO()
    assert commands.search_command(load_settings(), "쿠폰 한도", 3, True, out=out) == 0
    data = json.loads(out.getvalue())
    assert isinstance(data, list) and len(data) == 1
    assert {"source", "section", "score", "text"} <= set(data[0])
    assert data[0]["source"] == "compensation.md"


def test_policy_front_matter_keys() -> None:
    from bot.knowledge.documents import REQUIRED_KEYS, load_policies

    assert set(REQUIRED_KEYS) == {"id", "title", "lang", "version", "effective"}
    docs = load_policies(ROOT / "policies")
    assert docs, "policies/ holds the policy documents"
    assert {d.lang for d in docs} <= {"ko", "en"}
    # "ko + en": Korean documents carry `> EN:` summaries (or there are English documents)
    english = any(d.lang == "en" for d in docs) or any(
        "> EN:" in p.read_text(encoding="utf-8") for p in (ROOT / "policies").glob("*.md")
    )
    assert english, "policies/ has no English text"


# ---------------------------------------------------------------------------------------------
# §10 configuration
# ---------------------------------------------------------------------------------------------

# env var → (Settings field, a value to set, the parsed value expected)
DESIGN_ENV: dict[str, tuple[str, str, Any]] = {
    "DISCORD_TOKEN": ("discord_token", "tok-123", "tok-123"),
    "OPENAI_API_KEY": ("openai_api_key", "sk-test", "sk-test"),
    "OPENAI_BASE_URL": ("openai_base_url", "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    "ARCA_MODEL": ("model", "qwen2.5:7b", "qwen2.5:7b"),
    "ARCA_DATA_DIR": ("data_dir", "/tmp/arca-data", Path("/tmp/arca-data")),
    "ARCA_DB_URL": ("db_url", "sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
    "ARCA_CHROMA_URL": ("chroma_url", "http://127.0.0.1:8000", "http://127.0.0.1:8000"),
    "ARCA_STAFF_ROLE": ("staff_role", "GM", "GM"),
    "ARCA_STAFF_CHANNEL": ("staff_channel", "555", 555),
    "ARCA_SUPPORT_CHANNELS": ("support_channels", "1,2", [1, 2]),
    "ARCA_ALLOW_DMS": ("allow_dms", "true", True),
    "ARCA_TIMEZONE": ("timezone", "Europe/Berlin", "Europe/Berlin"),
    "ARCA_EMBEDDING_MODEL": ("embedding_model", "/models/minilm", "/models/minilm"),
}


def _plain(value: Any) -> Any:
    return value.get_secret_value() if hasattr(value, "get_secret_value") else value


@pytest.mark.parametrize("env", sorted(DESIGN_ENV))
def test_settings_env_var(env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import Settings

    field, raw, expected = DESIGN_ENV[env]
    assert field in Settings.model_fields, f"Settings has no field for {env}"
    alias = Settings.model_fields[field].validation_alias
    choices = getattr(alias, "choices", [alias])
    assert env in choices, f"{env} is not an alias of Settings.{field} ({choices})"
    monkeypatch.setenv(env, raw)
    assert _plain(getattr(Settings(), field)) == expected, f"{env}={raw!r} not read into Settings.{field}"


def test_settings_defaults() -> None:
    from bot.config import Settings

    s = Settings()
    assert s.data_dir == Path("var") or s.data_dir == Path("./var")
    assert s.staff_role == "Support Staff"
    assert s.allow_dms is False
    assert s.timezone == "Asia/Seoul"
    assert s.db_url is None and s.chroma_url is None
    assert s.database_url.startswith("sqlite")
    assert s.max_iterations == 50
    assert s.edit_interval == 1.0


def test_settings_from_arca_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import Settings

    toml = tmp_path / "arca.toml"
    toml.write_text('staff_role = "Game Master"\ntimezone = "UTC"\n', encoding="utf-8")
    monkeypatch.setenv("ARCA_CONFIG", str(toml))
    s = Settings()
    assert (s.staff_role, s.timezone) == ("Game Master", "UTC")


# ---------------------------------------------------------------------------------------------
# §9 transcript format
# ---------------------------------------------------------------------------------------------

# Copied verbatim from DESIGN.md §9.
DESIGN_EXAMPLE_YAML = """\
name: over-limit request is cut to the limit            # required
tags: [coupon, guard]
fixtures:
  clock: "2026-03-02T10:00:00+09:00"                     # optional
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders:  [{id: ORD001, player_id: P100, status: delayed, item: 한정판 굿즈, amount: 39000}]
  coupons: []                                            # {order_id, amount, status: active|revoked}
turns:
  - user: "ORD001 배송이 너무 늦어요. 3만원 쿠폰 주세요"
    as: "9001"                                           # discord id; default: first player's
    script:                                              # replay only
      - {tool: lookup_order, args: {order_id: ORD001}}
      - {tool: issue_coupon, args: {order_id: ORD001, amount: 30000}}
      - {tool: issue_coupon, args: {order_id: ORD001, amount: 20000}}
      - {final: "한도에 맞춰 20,000원 쿠폰을 발급했습니다."}
      - {answer: "1회 한도가 20,000원이라 ORD001에 20,000원 쿠폰을 발급했습니다."}   # optional
    interrupts: [{after_step: 0, text: "빨리 부탁해요", as: "9001"}]                 # optional
    expect:
      tools: [lookup_order, issue_coupon, issue_coupon]   # subsequence of calls, in order
      tools_not_called: [escalate_to_staff]
      codes: [AMOUNT_OVER_LIMIT, ISSUED]                   # subsequence of result codes, in order
      answer_contains: ["20,000"]
      answer_not_contains: ["30,000원 쿠폰을 발급"]
      coupons: [{order_id: ORD001, amount: 20000}]         # exact set of active coupons after the turn
      events: [inject]                                     # event types that must occur
      observations_contain: ["배송 지연"]                    # text the tools returned to the model
      observations_not_contain: ["ORD003"]                 # e.g. nothing about other players
  - staff: "/coupon list P100"
    as: "42"
    roles: [staff]
    expect: {reply_contains: ["ORD001"], reply_not_contains: ["P200"], denied: false}
"""

DESIGN_EXPECT_KEYS = {
    "tools",
    "tools_not_called",
    "codes",
    "answer_contains",
    "answer_not_contains",
    "coupons",
    "events",
    "observations_contain",
    "observations_not_contain",
    "reply_contains",
    "reply_not_contains",
    "denied",
}


def design_doc() -> Path:
    """`../shared/DESIGN.md` beside the checkout (or `ARCA_DESIGN_DOC`)."""
    return Path(os.environ.get("ARCA_DESIGN_DOC") or ROOT.parent / "shared" / "DESIGN.md")


def test_design_doc_example_is_copied_verbatim() -> None:
    design = design_doc()
    if not design.is_file():
        missing = f"{design} is missing (set ARCA_DESIGN_DOC to its path)"
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: CI must check the §9 example against DESIGN.md")
        pytest.skip(f"{missing}; outside CI the §9 example is not compared with DESIGN.md")
    assert DESIGN_EXAMPLE_YAML in design.read_text(encoding="utf-8"), "§9 example in DESIGN.md changed"


def test_the_design_doc_check_fails_under_ci_when_the_doc_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ARCA_DESIGN_DOC", str(tmp_path / "no-DESIGN.md"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must check"):
        test_design_doc_example_is_copied_verbatim()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="outside CI"):
        test_design_doc_example_is_copied_verbatim()


def test_messages_point_only_at_documents_that_exist() -> None:
    pattern = re.compile(r"docs/[\w./-]+\.md")
    areas = [
        "bot/players",
        "bot/staffroom",
        "bot/conversations",
        "bot/staff",
        "bot/ops",
        "bot/replay",
        "bot/app.py",
        "bench",
    ]
    missing = []
    for area in areas:
        root = ROOT / area
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for ref in pattern.findall(path.read_text(encoding="utf-8")):
                if not (ROOT / ref).is_file():
                    missing.append(f"{path.relative_to(ROOT)}: {ref}")
    assert not missing, missing


def _write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_design_example_transcript_validates(tmp_path: Path) -> None:
    from bot.replay.format import load_transcript

    case = load_transcript(_write(tmp_path, DESIGN_EXAMPLE_YAML))
    assert case.name == "over-limit request is cut to the limit"
    assert case.tags == ["coupon", "guard"]
    assert case.clock is not None and case.clock.utcoffset().total_seconds() == 9 * 3600
    assert [p.id for p in case.seed.players] == ["P100"]
    assert case.seed.players[0].discord_id == "9001"
    order = case.seed.orders[0]
    assert (order.id, order.player_id, order.status, order.item, order.amount) == (
        "ORD001",
        "P100",
        "delayed",
        "한정판 굿즈",
        39000,
    )
    user, staff = case.turns
    assert user.user and user.as_ == "9001"
    assert [next(k for k in ("tool", "tools", "final", "raw", "answer") if k in s) for s in user.script] == [
        "tool",
        "tool",
        "tool",
        "final",
        "answer",
    ]
    intr = user.interrupts[0]
    assert (intr.after_step, intr.text, intr.as_) == (0, "빨리 부탁해요", "9001")
    e = user.expect
    assert e.tools == ["lookup_order", "issue_coupon", "issue_coupon"]
    assert e.tools_not_called == ["escalate_to_staff"]
    assert e.codes == ["AMOUNT_OVER_LIMIT", "ISSUED"]
    assert e.answer_contains == ["20,000"]
    assert e.answer_not_contains == ["30,000원 쿠폰을 발급"]
    assert [(c.order_id, c.amount) for c in e.coupons] == [("ORD001", 20000)]
    assert e.events == ["inject"]
    assert e.observations_contain == ["배송 지연"]
    assert e.observations_not_contain == ["ORD003"]
    assert staff.staff == "/coupon list P100" and staff.as_ == "42" and staff.roles == ["staff"]
    assert staff.expect.reply_contains == ["ORD001"]
    assert staff.expect.reply_not_contains == ["P200"]
    assert staff.expect.denied is False


def test_expect_model_has_every_design_key() -> None:
    from bot.replay.format import Expect

    missing = DESIGN_EXPECT_KEYS - set(Expect.model_fields)
    assert not missing, f"expect keys of DESIGN §9 not accepted: {sorted(missing)}"


def test_only_name_and_turns_are_required(tmp_path: Path) -> None:
    from bot.replay.format import TranscriptError, load_transcript

    minimal = "name: minimal\nturns:\n  - user: hi\n    as: '9001'\n"
    case = load_transcript(_write(tmp_path, minimal))
    assert case.name == "minimal" and len(case.turns) == 1
    for broken in ("turns:\n  - user: hi\n    as: '1'\n", "name: no turns\n"):
        with pytest.raises(TranscriptError):
            load_transcript(_write(tmp_path, broken, "broken.yaml"))


def test_other_step_kinds_and_coupon_fixture_statuses(tmp_path: Path) -> None:
    from bot.replay.format import load_transcript

    text = """\
name: other step kinds
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders: [{id: ORD001, player_id: P100, status: delayed}, {id: ORD002, player_id: P100, status: paid}]
  coupons: [{order_id: ORD001, amount: 5000, status: active}, {order_id: ORD002, amount: 1000, status: revoked}]
turns:
  - user: "주문 두 개 확인"
    script:
      - {tools: [{tool: lookup_order, args: {order_id: ORD001}}, {tool: lookup_order, args: {order_id: ORD002}}]}
      - {raw: "this is not JSON"}
      - {final: "확인했습니다."}
  - user: "상담원 연결 중"
    script: []
"""
    case = load_transcript(_write(tmp_path, text))
    assert [c.status for c in case.seed.coupons] == ["active", "revoked"]
    assert case.turns[0].script[0]["tools"][1]["args"] == {"order_id": "ORD002"}
    assert case.turns[0].script[1] == {"raw": "this is not JSON"}
    assert case.turns[1].script == []


def test_design_example_replays_green_in_both_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The §9 example is a passing case with the scripted model (no policy index needed for it)."""
    import asyncio

    from bot.config import load_settings
    from bot.replay.command import replay

    class NoPolicies:
        async def search(self, query: str, top_k: int = 3) -> list[Any]:
            return []

    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "data"))
    lines: list[str] = []
    report = tmp_path / "report.json"
    rc = asyncio.run(
        replay(
            load_settings(),
            [_write(tmp_path, DESIGN_EXAMPLE_YAML)],
            policy_index=NoPolicies(),
            out=lines.append,
            report=report,
        )
    )
    assert rc == 0, "\n".join(lines)
    assert lines[-1] == "2 passed, 0 failed", lines
    assert any("[native]" in line for line in lines) and any("[json]" in line for line in lines)
    assert json.loads(report.read_text(encoding="utf-8"))["passed"] == 2


# ---------------------------------------------------------------------------------------------
# §4 engine events and protocol names
# ---------------------------------------------------------------------------------------------

# seed 000's event table: (payload, fields the model must carry)
SEED_EVENTS: list[tuple[dict[str, Any], set[str]]] = [
    ({"type": "thinking", "status": "start", "iteration": 1}, {"type", "status", "iteration"}),
    (
        {"type": "thinking", "status": "done", "iteration": 1, "reasoning": "r"},
        {"type", "status", "iteration", "reasoning"},
    ),
    (
        {
            "type": "iteration",
            "status": "start",
            "iteration": 1,
            "tool_name": "lookup_order",
            "tool_args": {"order_id": "ORD001"},
            "call_id": "c1",
        },
        {"type", "status", "iteration", "tool_name", "tool_args"},
    ),
    (
        {
            "type": "iteration",
            "status": "done",
            "iteration": 1,
            "tool_name": "lookup_order",
            "tool_args": {},
            "call_id": "c1",
            "observation": "주문 ORD001",
            "error": None,
            "iter_elapsed": 0.01,
        },
        {"type", "status", "iteration", "tool_name", "observation", "error", "iter_elapsed"},
    ),
    ({"type": "answer", "channel": "step", "status": "start"}, {"type", "status"}),
    ({"type": "answer", "channel": "answer", "status": "start"}, {"status"}),
    ({"type": "answer", "channel": "answer", "status": "delta", "content": "안녕"}, {"status", "content"}),
    ({"type": "answer", "channel": "answer", "status": "done"}, {"status"}),
    (
        {"type": "compact", "original_messages": 40, "kept_messages": 8},
        {"original_messages", "kept_messages"},
    ),
    ({"type": "phase", "phase": "selecting_tools", "total_tools": 14}, {"phase", "total_tools"}),
    ({"type": "inject", "content": "[USER INTERRUPT] 빨리"}, {"type", "content"}),
    (
        {"type": "done", "answer": "끝", "iterations": 3, "usage": {"prompt_tokens": 10}, "elapsed": 1.5},
        {"answer", "iterations", "usage", "elapsed"},
    ),
]


@pytest.mark.parametrize(
    "payload, fields", SEED_EVENTS, ids=lambda v: str(v.get("type", "")) if isinstance(v, dict) else ""
)
def test_event_models_carry_seed_payload_fields(payload: dict[str, Any], fields: set[str]) -> None:
    from bot.engine.events import event_adapter

    event = event_adapter.validate_python(payload)
    dumped = event.model_dump()
    missing = fields - set(type(event).model_fields)
    assert not missing, f"{type(event).__name__} lacks seed payload fields {sorted(missing)}"
    for key, value in payload.items():
        assert dumped[key] == value, f"{type(event).__name__}.{key}: {dumped[key]!r} != {value!r}"


def test_event_union_types() -> None:
    from bot.engine import events

    union = get_args(get_args(events.Event)[0])
    types = {m.model_fields["type"].default for m in union}
    assert types == {"thinking", "iteration", "answer", "compact", "phase", "inject", "done"}
    assert set(get_args(events.ThinkingEvent.model_fields["status"].annotation)) == {"start", "done"}
    assert set(get_args(events.IterationEvent.model_fields["status"].annotation)) == {"start", "done"}
    assert set(get_args(events.AnswerEvent.model_fields["status"].annotation)) == {"start", "delta", "done"}
    assert set(get_args(events.AnswerEvent.model_fields["channel"].annotation)) == {"step", "answer"}


def test_engine_names() -> None:
    from bot.engine import INTERRUPT_PREFIX, InterruptQueue, ReActAgent, StructuredCallResult
    from bot.engine import structured_llm_call as slc

    assert INTERRUPT_PREFIX == "[USER INTERRUPT]"
    q = InterruptQueue()
    q.put("a")
    q.put("b")
    assert q.drain() == ["a", "b"] and q.drain() == []
    params = inspect.signature(slc).parameters
    assert list(params)[:3] == ["llm", "messages", "schema"]
    for kw in ("parse_fn", "default_value", "regex_fallback"):
        assert params[kw].kind is inspect.Parameter.KEYWORD_ONLY, f"structured_llm_call(*, {kw})"
    assert [f.name for f in dataclasses.fields(StructuredCallResult)] == [
        "value",
        "level_used",
        "llm_calls",
        "usage",
    ]
    init = inspect.signature(ReActAgent.__init__).parameters
    assert init["use_native_tools"].default is True
    assert init["max_iterations"].default == 50
    assert callable(ReActAgent.run) and callable(ReActAgent.stream_answer)


def test_json_mode_action_format() -> None:
    from bot.engine import parse_action

    call = parse_action(
        '{"action": "tool_call", "tool": "lookup_order", "args": {"order_id": "ORD001"}, "reasoning": "r"}'
    )
    assert call is not None and call.kind == "tool_call"
    assert (call.tool, call.args, call.reasoning) == ("lookup_order", {"order_id": "ORD001"}, "r")
    final = parse_action('{"action": "final_answer", "answer": "끝", "reasoning": ""}')
    assert final is not None and final.kind == "final_answer" and final.answer == "끝"
    assert parse_action("not json at all") is None


def test_llm_protocol_names() -> None:
    from bot.llm import PURPOSES, LLMResult, ModelRegistry, OpenAILLM, ScriptedLLM
    from bot.llm.base import DEFAULT_ABILITIES, LLM

    assert set(PURPOSES) == {"loop", "synthesis", "select_tools", "compact", "structured"}
    assert set(DEFAULT_ABILITIES) == {"tool_call", "json_mode", "streaming", "context_window"}
    assert {"content", "tool_calls", "reasoning_content", "usage"} <= {
        f.name for f in dataclasses.fields(LLMResult)
    }
    for cls in (LLM, OpenAILLM, ScriptedLLM):
        chat = inspect.signature(cls.chat).parameters
        for kw in ("tools", "tool_choice", "response_format", "purpose"):
            assert kw in chat and chat[kw].kind is inspect.Parameter.KEYWORD_ONLY, f"{cls.__name__}.chat {kw}"
        assert chat["purpose"].default == "loop"
        stream = inspect.signature(cls.stream_chat).parameters
        assert stream["purpose"].default == "synthesis", f"{cls.__name__}.stream_chat purpose"
    base = inspect.signature(OpenAILLM.__init__).parameters
    assert {"model", "base_url", "api_key"} <= set(base)
    reg = ModelRegistry()
    main, fast = ScriptedLLM([]), ScriptedLLM([])
    reg.register("a", main, roles=["main"])
    assert reg.for_role("fast") is main, "`fast` falls back to `main`"
    reg.register("b", fast, roles=["fast"])
    assert reg.for_role("main") is main and reg.for_role("fast") is fast


# ---------------------------------------------------------------------------------------------
# §7 thread ids, §2 layout
# ---------------------------------------------------------------------------------------------


def test_thread_ids_have_the_five_forms_of_design_7() -> None:
    from bot.vocabulary import ThreadId

    assert ThreadId.discord(123) == "discord:123"
    assert ThreadId.dm("456") == "dm:456"
    assert ThreadId.console("main") == "console:main"
    assert ThreadId.replay("over-limit") == "replay:over-limit"
    assert ThreadId.web("P100", "main") == "web:P100:main"
    with pytest.raises(ValueError):
        ThreadId.parse("slack:x")


def test_discord_thread_ids() -> None:
    from bot.players.discord_app.messages import thread_id_of_message
    from bot.staffroom.discord_staff.cog import thread_id_of_interaction

    in_guild = SimpleNamespace(
        guild=object(), channel=SimpleNamespace(id=111), author=SimpleNamespace(id=9001)
    )
    in_dm = SimpleNamespace(guild=None, channel=SimpleNamespace(id=222), author=SimpleNamespace(id=9001))
    assert thread_id_of_message(in_guild) == "discord:111"
    assert thread_id_of_message(in_dm) == "dm:9001"
    slash = SimpleNamespace(guild_id=1, channel_id=333, user=SimpleNamespace(id=42))
    slash_dm = SimpleNamespace(guild_id=None, channel_id=444, user=SimpleNamespace(id=42))
    assert thread_id_of_interaction(slash) == "discord:333"
    assert thread_id_of_interaction(slash_dm) == "dm:42"


def test_layout_and_no_module_named_discord() -> None:
    for name in ("pyproject.toml", "bot", "tools", "policies", "tests", "data"):
        assert (ROOT / name).exists(), f"top-level {name} missing"
    for module in (
        "config.py",
        "memory.py",
        "conversations.py",
        "staff.py",
        "cli.py",
        "engine",
        "llm",
        "store",
        "guards",
        "players",
        "staffroom",
        "serving",
        "web_kit",
        "discord_kit",
        "replay",
    ):
        # A module may grow into a package of the same name (`staff.py` → `staff/`).
        package = ROOT / "bot" / module.removesuffix(".py") / "__init__.py"
        assert (ROOT / "bot" / module).exists() or package.is_file(), f"bot/{module} missing"
    for module in ("base.py", "orders.py", "coupons.py", "policy_search.py", "escalate.py"):
        assert (ROOT / "tools" / module).exists(), f"tools/{module} missing"
    shadowing = [
        p
        for top in ("bot", "tools")
        for p in (ROOT / top).rglob("discord*")
        if p.name in ("discord", "discord.py")
    ]
    assert not shadowing, f"a module named discord shadows discord.py: {shadowing}"
    assert (ROOT / "bot" / "serving" / "discord_client" / "client.py").is_file()
    from bot.memory import ThreadMemory  # noqa: F401  (named in §1/§2)


def test_the_import_layers_cover_every_module_of_bot_and_tools() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    covered = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    modules = {"tools"} | {
        f"bot.{p.stem}"
        for p in (ROOT / "bot").iterdir()
        if p.suffix == ".py" or (p / "__init__.py").is_file()
    }
    modules.discard("bot.__init__")
    assert modules - covered == set(), "add these to the layers contract in pyproject.toml"
    assert covered - modules == set(), "the layers contract names modules that do not exist"


def test_only_the_store_may_import_a_database_driver_or_a_store_backend() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    store = next(c for c in config["contracts"] if "bot.store.backends" in c.get("forbidden_modules", ()))
    assert {"sqlite3", "asyncpg", "aiosqlite", "bot.store.backends"} <= set(store["forbidden_modules"])
    assert config["include_external_packages"] is True  # else the drivers are not in the import graph
    modules = {"tools"} | {
        f"bot.{p.stem}"
        for p in (ROOT / "bot").iterdir()
        if p.suffix == ".py" or (p / "__init__.py").is_file()
    }
    modules -= {"bot.__init__", "bot.store"}
    assert set(store["source_modules"]) == modules, "every module but bot.store is a source of that contract"


def test_no_private_sqlalchemy_api_is_used() -> None:
    private = re.compile(
        r"\._(cached_bind_processor|cached_result_processor|bind_processors|gen_dialect_impl)\b"
    )
    used = {
        str(path.relative_to(ROOT))
        for folder in ("bot", "tools")
        for path in (ROOT / folder).rglob("*.py")
        if private.search(path.read_text(encoding="utf-8"))
    }
    assert used == set(), f"use the public type API (`type.dialect_impl(dialect).bind_processor`): {used}"
