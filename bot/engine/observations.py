"""How a `ToolResult` becomes the observation the model reads: `[CODE] message`, with large HTML or
Markdown artifacts replaced by a one-line note so the model does not echo them back.
"""

from __future__ import annotations

import re
from typing import Any

from tools.base import ToolResult

ARTIFACT_NOTE = (
    "[Artifact generated: {name}] The content is rendered as a preview in the UI; do not repeat it, "
    "refer to it briefly instead."
)
MARKDOWN_ARTIFACT_CHARS = 4_000
"""Markdown longer than this (with document structure) counts as an artifact, not an observation."""

_HTML_DOC = re.compile(r"^\s*(<!doctype html|<html[\s>])", re.IGNORECASE)
_MD_STRUCTURE = re.compile(r"^(#{1,6} |\|.*\||```)", re.MULTILINE)


def artifact_name(tool: str, result: ToolResult) -> str | None:
    """The artifact's name when the result is a rendered artifact rather than text for the model."""
    data: dict[str, Any] = result.data if isinstance(result.data, dict) else {}
    artifact = data.get("artifact")
    if artifact:
        if isinstance(artifact, dict):
            return str(artifact.get("name") or artifact.get("filename") or f"{tool}-artifact")
        if isinstance(artifact, str) and len(artifact) <= 200 and "\n" not in artifact:
            return artifact
        return f"{tool}-artifact"
    message = result.message or ""
    if _HTML_DOC.match(message):
        return f"{tool}.html"
    if len(message) > MARKDOWN_ARTIFACT_CHARS and len(_MD_STRUCTURE.findall(message)) >= 3:
        return f"{tool}.md"
    return None


def observation_text(tool: str, result: ToolResult) -> str:
    """`[CODE] message` — the code first, so the model can act on refusals like AMOUNT_OVER_LIMIT."""
    name = artifact_name(tool, result)
    body = ARTIFACT_NOTE.format(name=name) if name else (result.message or "(no output)")
    return f"[{result.code}] {body}"
