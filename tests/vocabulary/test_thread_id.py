"""One `ThreadId` (DESIGN.md §7): built in its five forms, read back into its parts, and the text itself
wherever a thread id is stored or compared."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bot.vocabulary import ThreadId


@pytest.mark.parametrize(
    ("built", "text", "kind", "ident"),
    [
        (ThreadId.discord(123), "discord:123", "discord", "123"),
        (ThreadId.dm(9001), "dm:9001", "dm", "9001"),
        (ThreadId.console("main"), "console:main", "console", "main"),
        (ThreadId.replay("over-limit"), "replay:over-limit", "replay", "over-limit"),
        (ThreadId.web("anon-3f2a", "main"), "web:anon-3f2a:main", "web", "anon-3f2a:main"),
    ],
)
def test_each_form_is_built_and_parsed_back_to_its_parts(built: ThreadId, text: str, kind: str, ident: str):
    parsed = ThreadId.parse(text)

    assert built == text == parsed and json.dumps(built) == json.dumps(text)
    assert (parsed.kind, parsed.ident) == (kind, ident)
    assert hash(built) == hash(text), "a dict keyed by plain text finds it"


def test_discord_and_dm_ids_read_as_numbers_and_others_do_not():
    assert ThreadId.discord(123).snowflake == 123
    assert ThreadId.dm("9001").snowflake == 9001
    assert ThreadId.console("123").snowflake is None
    assert ThreadId("discord:general").snowflake is None
    assert ThreadId("discord:١٢٣").snowflake is None, "only ASCII digits are a Discord id"


def test_a_web_thread_names_its_identity_and_its_thread():
    assert ThreadId.web("P100", "main").web_parts == ("P100", "main")
    assert ThreadId("web:staff-console").web_parts is None
    assert ThreadId.discord(1).web_parts is None


@pytest.mark.parametrize("text", ["slack:x", "discord", "discord:", ":123", ""])
def test_a_text_that_is_not_a_thread_id_is_refused(text: str):
    with pytest.raises(ValueError, match="not a thread id"):
        ThreadId.parse(text)


ACTOR_LABELS = {
    "f'discord:{self.discord_id}'",  # tools/base.py, Actor.label
    "f'web:{self.key}'",  # the web identity's actor display name
    "f'console:{discord_id}'",  # the console actor's display name
}
"""Who is talking (an audit label, a display name), not where: these look like thread ids but are not."""


def test_no_module_builds_a_thread_id_by_hand():
    """Thread ids are built by `ThreadId` only: no f-string opening with a thread kind (`f"dm:{…}"`)."""
    root = Path(__file__).resolve().parents[2]
    kinds = ("discord:", "dm:", "console:", "replay:", "web:")
    built = []
    for path in [*root.joinpath("bot").rglob("*.py"), *root.joinpath("tools").rglob("*.py")]:
        rel = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
                if isinstance(head, ast.Constant) and str(head.value).startswith(kinds):
                    if rel != "bot/vocabulary/thread_id.py" and ast.unparse(node) not in ACTOR_LABELS:
                        built.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert built == []
