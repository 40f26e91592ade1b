"""The configuration reference (docs/configuration.md), rendered from the `Settings` model itself: each
part's module docstring, and per field its variable, default, accepted values and attribute docstring.

`python -m bot.config.reference --write` rewrites the page; tests/config/test_reference.py fails while the
checked-in page differs from what the model renders, so the reference cannot drift from the code.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import itertools
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from bot.config.settings import Settings
from bot.config.sources import CONFIG_FILE_ENV

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
"""Where the rendered page is checked in."""

_ORDER = [
    "ModelSettings",
    "StorageSettings",
    "DiscordSettings",
    "ConversationSettings",
    "WebSettings",
    "OperationsSettings",
    "DeskSettings",
    "IncidentSettings",
    "AttachmentSettings",
    "GameSettings",
]
"""Parts in reading order (a part not named here follows them, in `Settings`' own order)."""

_HEAD = f"""# Configuration reference

<!-- Generated from bot/config by `python -m bot.config.reference --write`; do not edit by hand.
     tests/config/test_reference.py fails when this page and the settings model differ. -->

Every setting is an environment variable, or the same name in lowercase in an optional `arca.toml`
(`discord_token = "…"`, `staff_role = "Support Staff"`). The file is `./arca.toml` when it exists, or the
one `{CONFIG_FILE_ENV}` names (a file named there must exist; an empty `{CONFIG_FILE_ENV}` means no file).
An environment variable wins over the file; only the names in the tables below are read from the
environment (in any case), so a generic `LOG_LEVEL` or `TIMEZONE` there is not the bot's. An invalid value
stops start-up with one line naming the variable (or the file and key), never echoing the value;
`arca-bot doctor` reports the same problem.
Lists are comma-separated (`123, 456`). Secrets are never printed or logged.

Extra named models go in `arca.toml` as `[models.NAME]` tables:

```toml
[models.local]
model = "qwen2.5:7b-instruct"
base_url = "http://127.0.0.1:11434/v1"
roles = ["fast"]
tool_call = true
json_mode = true
context_window = 32000
```
"""


class UndocumentedSetting(Exception):
    """A settings field has no attribute docstring, so the reference would have an empty row."""


def _parts() -> list[type[BaseSettings]]:
    found = [
        cls
        for cls in reversed(Settings.__mro__)
        if isinstance(cls, type)
        and issubclass(cls, BaseSettings)
        and cls not in (BaseSettings, Settings)
        and cls.__module__.partition(".")[0] not in ("pydantic", "pydantic_settings")
    ]
    rank = {name: i for i, name in enumerate(_ORDER)}
    return sorted(found, key=lambda cls: rank.get(cls.__name__, len(_ORDER)))


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """`field: T = …` followed by a string literal: the string is that field's documentation."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _own_fields(cls: type[BaseSettings]) -> list[str]:
    return [name for name in inspect.get_annotations(cls) if name in cls.model_fields]


def _variable(name: str, info: FieldInfo) -> str:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices) and isinstance(alias.choices[0], str):
        return f"`{alias.choices[0]}`"
    if name == "models":
        return "`[models.NAME]` (arca.toml)"
    return f"`{name}`"


def _bounds(info: FieldInfo) -> str:
    low = high = ""
    for item in info.metadata:
        if isinstance(item, Ge | Gt):
            low = f"{'≥' if isinstance(item, Ge) else '>'} {_number(item.ge if isinstance(item, Ge) else item.gt)}"
        elif isinstance(item, Le | Lt):
            high = f"{'≤' if isinstance(item, Le) else '<'} {_number(item.le if isinstance(item, Le) else item.lt)}"
        elif isinstance(item, MinLen | MaxLen):
            continue
    return ", ".join(p for p in (low, high) if p)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def _kind(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        return _kind(inner[0]) if len(inner) == 1 else " or ".join(_kind(a) for a in inner)
    if origin is Literal:
        return " | ".join(f"`{v}`" for v in get_args(annotation))
    if origin is list:
        return f"list of {_kind(get_args(annotation)[0])}s"
    if origin is dict:
        return "tables"
    if getattr(origin, "__name__", "") == "Annotated":
        return _kind(get_args(annotation)[0])
    if annotation is SecretStr:
        return "secret"
    if annotation is bool:
        return "`true` | `false`"
    names = {int: "integer", float: "number", str: "text", Path: "path"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if value is None or value in ("", [], {}):
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"`{_number(value)}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _part_title(cls: type) -> tuple[str, str]:
    """The part's heading and its module's one-paragraph summary."""
    doc = " ".join((sys.modules[cls.__module__].__doc__ or "").split("\n\n")[0].split())
    title = cls.__name__.removesuffix("Settings")
    title = {
        "Model": "Models",
        "Game": "Game backend",
        "Desk": "Support desk",
        "Incident": "Incidents",
        "Attachment": "Attachments",
    }.get(title, title)
    return title, doc


def render() -> str:
    """The whole page, as checked in."""
    out = [_HEAD]
    missing: list[str] = []
    for cls in _parts():
        docs = _attribute_docstrings(cls)
        title, summary = _part_title(cls)
        rows = []
        for name in _own_fields(cls):
            info = Settings.model_fields[name]
            if name not in docs:
                missing.append(f"{cls.__module__}.{cls.__name__}.{name}")
                continue
            kind = _kind(info.annotation)
            bounds = _bounds(info)
            accepted = f"{kind}, {bounds}" if bounds else kind
            rows.append(
                f"| {_variable(name, info)} | {_default(info)} | {_cell(accepted)} | {_cell(docs[name])} |"
            )
        if not rows:
            continue
        out.append(f"## {title}\n")
        if summary:
            out.append(f"{summary}\n")
        out.append("| variable | default | accepted | meaning |\n|---|---|---|---|")
        out.append("\n".join(rows) + "\n")
    if missing:
        raise UndocumentedSetting(
            "give these settings an attribute docstring (a string right under the field):\n  "
            + "\n  ".join(missing)
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Render the configuration reference from the settings model."
    )
    parser.add_argument("--write", action="store_true", help=f"rewrite {PAGE.relative_to(PAGE.parents[1])}")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        PAGE.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
