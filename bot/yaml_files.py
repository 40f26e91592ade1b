"""YAML files read with their line numbers, and pydantic errors as one line: the one place for both.

Seed files, transcripts and the coupon rules all report a problem as `file:line: where: what`.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

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


def load_yaml(text: str) -> Any:
    """The data of one YAML document, read with the same loader as `parse_yaml` (raises `yaml.YAMLError`)."""
    return parse_yaml(text)[1]


def first_error(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    """(location, message) of the first error, without pydantic's `Value error, ` prefix."""
    err = exc.errors()[0]
    return tuple(err.get("loc") or ()), str(err.get("msg", "invalid value")).removeprefix("Value error, ")
