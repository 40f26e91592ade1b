"""The interrupt marker is spelled once: the engine writes it, the web history takes it off, and the
browser's one copy (the widget strips it from live `inject` events) is the same text."""

from __future__ import annotations

import re
from pathlib import Path

from bot.engine.interrupts import interrupt_message
from bot.vocabulary import INTERRUPT_PREFIX

WEB = Path(__file__).resolve().parents[2] / "bot" / "players" / "web"


def test_the_injected_message_opens_with_the_marker():
    assert interrupt_message(["빨리 부탁해요"]) == f"{INTERRUPT_PREFIX} 빨리 부탁해요"


def test_the_widget_strips_the_same_marker():
    [widget] = [p for p in WEB.rglob("widget.js")]
    copies = re.findall(r"INTERRUPT_PREFIX\s*=\s*\"([^\"]*)\"", widget.read_text(encoding="utf-8"))
    assert copies == [INTERRUPT_PREFIX]


def test_no_python_module_spells_the_marker_again():
    bot = Path(__file__).resolve().parents[2] / "bot"
    spelled = [
        str(p.relative_to(bot))
        for p in bot.rglob("*.py")
        if "[USER INTERRUPT]" in p.read_text(encoding="utf-8")
    ]
    assert spelled == ["vocabulary/interrupt.py"]
