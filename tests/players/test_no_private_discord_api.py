"""The channels use discord.py (and every other library) through public names only: no `obj._private`
attribute of another object, no library dunder such as `__cog_app_commands__` or
`__discord_app_commands_param_description__`, no `getattr(obj, "_private")`."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
CHANNELS = [BOT / "players", BOT / "staffroom"]
"""The players' channels and the staff surfaces: every module that talks to discord.py or the web."""
PYTHON_DUNDERS = {"__name__", "__qualname__", "__doc__", "__module__", "__class__", "__signature__"}
"""Python's own function and class attributes, which libraries read publicly (`inspect.signature`)."""


def _private_accesses(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            if node.attr in PYTHON_DUNDERS:
                continue
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2:
                name = node.args[1]
                if isinstance(name, ast.Constant) and str(name.value).startswith("_"):
                    found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "__discord_" in node.value or "__cog_" in node.value:
                found.append(f"{node.lineno}: {node.value!r}")
    return found


def test_the_check_finds_the_private_accesses_it_forbids():
    source = (
        "cog.__cog_app_commands__ = []\n"
        "callback.__discord_app_commands_param_description__ = {}\n"
        "bot.tree._global_commands\n"
        "getattr(command, '_params')\n"
        "self._tasks\n"
        "callback.__signature__ = sig\n"
        "type(exc).__name__\n"
    )
    assert len(_private_accesses(source)) == 4


def test_no_channel_module_reaches_into_a_private_attribute():
    offenders = {
        str(path.relative_to(BOT)): found
        for path in sorted(p for room in CHANNELS for p in room.rglob("*.py"))
        if (found := _private_accesses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
