"""The example values a tool's own texts show (its docstring, its argument descriptions and declared
`examples`): ids such as ORD001 for id fields, numbers such as 5000 for integer fields. The engine runs
a call with one of them only when the player wrote it (`bot.engine.example_values`)."""

from __future__ import annotations

import re

from pydantic import BaseModel

_EXAMPLE_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,}\d{2,}(?![A-Za-z0-9])")
_EXAMPLE_NUMBER = re.compile(r"(?<![A-Za-z\d,.])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![A-Za-z\d,.])\d{3,}(?![\d,])")


def declared_examples(description: str, args_model: type[BaseModel]) -> dict[str, frozenset[str]]:
    """Per id or integer argument, its example values (upper-cased, without thousands separators). A
    search `query` is listed without examples, so a copied placeholder is refused; other free text (a
    reason, a summary) is not listed: an example there does no harm."""
    values: dict[str, frozenset[str]] = {}
    for name, info in args_model.model_fields.items():
        if name == "query":
            values[name] = frozenset()
            continue
        numeric = info.annotation is int or info.annotation == (int | None)
        if not numeric and not name.endswith("id"):
            continue
        text = " ".join([description, info.description or "", *map(str, info.examples or [])])
        pattern = _EXAMPLE_NUMBER if numeric else _EXAMPLE_ID
        values[name] = frozenset(m.group(0).replace(",", "").upper() for m in pattern.finditer(text))
    return values
