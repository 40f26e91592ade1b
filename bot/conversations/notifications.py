"""Staff notifications (escalations, coupon approval requests): the recent ones are kept, and every
channel that listens (the Discord staff channel, the console) gets each one."""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from tools.base import StaffNotifier

log = logging.getLogger(__name__)


class StaffNotifications:
    """`notify` is the `ToolServices.notify_staff` the tools call; channels add themselves to `sinks`."""

    def __init__(self, *, keep: int = 200) -> None:
        self.sinks: list[StaffNotifier] = []
        self.recent: deque[tuple[str, dict[str, Any]]] = deque(maxlen=keep)

    async def notify(self, kind: str, payload: dict[str, Any]) -> None:
        self.recent.append((kind, payload))
        for sink in list(self.sinks):
            try:
                await sink(kind, payload)
            except Exception:  # one broken sink must not lose the others or the record
                log.exception("staff notification sink failed")
