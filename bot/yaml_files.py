"""YAML files read with their line numbers, and pydantic errors as one line: the one place for both.

Seed files, transcripts, the coupon rules and the policy front matter all report a problem with its
file and line (`file:line: where: what`); the web API reports a field the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

_YAML_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """(node tree, data) from ONE parse with libyaml's loader when present: the nodes keep the lines.

    Raises `yaml.YAMLError` (with `problem_mark` for syntax errors) like `yaml.safe_load`.
    """
    loader = _YAML_LOADER(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return root, data


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Walk the composed YAML node tree along a pydantic error location; 1-based line."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    nxt = value
                    line = key.start_mark.line + 1
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
        if node is None:
            break
    return line


def yaml_error_at(exc: yaml.YAMLError, text: str) -> tuple[int | None, str]:
    """(1-based line or None, what is wrong) of a YAML syntax error in `text`.

    At the end of the text ("unexpected end of stream") the line where the unclosed construct starts
    is the useful one.
    """
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    start = getattr(exc, "context_mark", None)
    if start is not None and mark is not None and mark.index >= len(text.rstrip()):
        mark = start
    what = "; ".join(x for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
    return (mark.line + 1 if mark is not None else None), what or str(exc)


def located(source: str, root: yaml.Node | None, loc: tuple[Any, ...], *, line: int | None = None) -> str:
    """`source:line: a.0.b` for the value at `loc` (its line from the node tree, else `line`; no line
    when neither is known): the start of every one-line file error."""
    at = line_of(root, loc) or line
    return f"{source}{f':{at}' if at else ''}: {'.'.join(str(p) for p in loc) or '(top)'}"


def load_yaml(text: str) -> Any:
    """The data of one YAML document, read with the same loader as `parse_yaml` (raises `yaml.YAMLError`)."""
    return parse_yaml(text)[1]


def first_error(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    """(location, message) of the first error: the location without pydantic's validator parts
    (`function-after[...]`), the message without its `Value error, ` prefix."""
    err = exc.errors()[0]
    loc = tuple(p for p in err.get("loc") or () if not (isinstance(p, str) and p.startswith("function-")))
    return loc, str(err.get("msg", "invalid value")).removeprefix("Value error, ")


M = TypeVar("M", bound=BaseModel)


def load_model_file(
    path: Path, model: type[M], error: type[Exception], what: str
) -> tuple[M, yaml.Node | None]:
    """Read `path` as one YAML mapping validated as `model`, with its node tree (for the lines of later
    checks); any problem is `error("file:line: …")`. `what` ends the message for a file that is not a
    mapping ("a transcript is a mapping with `name` and `turns`")."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}:1: cannot read: {exc}") from None
    try:
        root, data = parse_yaml(text)
    except yaml.YAMLError as exc:
        line, problem = yaml_error_at(exc, text)
        raise error(f"{path}:{line or 1}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise error(f"{path}:1: {what}")
    try:
        return model.model_validate(data), root
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise error(f"{located(str(path), root, loc, line=1)}: {msg}") from None


def child(root: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of `key` in a mapping node (None when absent)."""
    if not isinstance(root, yaml.MappingNode):
        return None
    return next((v for k, v in root.value if getattr(k, "value", None) == key), None)


def fixture_clock(
    fixtures: dict[str, Any], root: yaml.Node | None, path: Path, error: type[Exception]
) -> Any:
    """`fixtures.clock` of a transcript or scenario as an aware datetime (None when absent); anything
    else is `error("file:line: …")`."""
    from datetime import datetime

    clock = fixtures.get("clock")
    if clock is None:
        return None
    try:
        moment = datetime.fromisoformat(str(clock))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        line = line_of(root, ("fixtures", "clock")) or 1
        raise error(f"{path}:{line}: fixtures.clock must be an ISO time with offset")
    return moment
