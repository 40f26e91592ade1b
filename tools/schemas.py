"""What the model reads about a tool's arguments, and what it reads back when it got them wrong."""

from __future__ import annotations

import functools
from typing import Any

from openai import pydantic_function_tool
from pydantic import BaseModel, ValidationError


@functools.cache
def schema_of(args_model: type[BaseModel], name: str, description: str) -> dict[str, Any]:
    # Built once per tool: pydantic's JSON schema generation costs ~1 ms a tool, on every run otherwise.
    param = pydantic_function_tool(args_model, name=name, description=description)
    function = dict(param["function"])
    function.pop("strict", None)
    # Strict mode lists every field as required; without `strict` that would tell the model an
    # optional argument (status, reason, top_k) is mandatory. Restore the model's own view.
    plain = args_model.model_json_schema()
    parameters = dict(function["parameters"])
    parameters["required"] = list(plain.get("required", []))
    properties = {k: dict(v) for k, v in parameters.get("properties", {}).items()}
    for key, spec in plain.get("properties", {}).items():
        if "default" in spec and key in properties:
            properties[key]["default"] = spec["default"]
    parameters["properties"] = properties
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def copy_json(value: Any) -> Any:
    """A copy of a JSON tree (dicts, lists, scalars) a caller may change freely. Every run takes one
    of each schema: `copy.deepcopy` cost a quarter of a run's start on the event loop, this a third
    of that."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def describe_validation_error(exc: ValidationError) -> str:
    """One line per broken field: the field name and what type was expected."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        kind = err.get("type", "")
        if kind == "missing":
            parts.append(f"'{loc}' is required")
        elif kind == "extra_forbidden":
            parts.append(f"'{loc}' is not an argument of this tool")
        else:
            expected = {
                "int_parsing": "an integer, e.g. 5000",
                "int_type": "an integer, e.g. 5000",
                "int_from_float": "a whole number, e.g. 5000",
                "string_type": "a string",
                "bool_type": "true or false",
                "bool_parsing": "true or false",
            }.get(kind, err.get("msg", "a valid value"))
            parts.append(f"'{loc}' must be {expected} (got {err.get('input')!r})")
    return "; ".join(parts)
