"""Whom an incident affects (`IncidentScope`): all players, orders matching statuses / an item / a date
window, or players named in a list; stored as JSON on the incident and turned into the SQL condition on
`orders` its targets are read with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_

from bot.store.models import Order


@dataclass(frozen=True)
class IncidentScope:
    """Whom an incident affects: `all` players; `orders` matching statuses / an item / a date window;
    `players` named in a list (an uploaded CSV)."""

    kind: str = "all"
    statuses: tuple[str, ...] = ()
    item: str | None = None
    """A part of the item's name (`한정판`)."""
    since: datetime | None = None
    until: datetime | None = None
    player_ids: tuple[str, ...] = ()

    def to_json(self) -> str:
        data: dict[str, Any] = {"kind": self.kind}
        if self.statuses:
            data["statuses"] = list(self.statuses)
        if self.item:
            data["item"] = self.item
        if self.since:
            data["since"] = self.since.isoformat()
        if self.until:
            data["until"] = self.until.isoformat()
        if self.player_ids:
            data["player_ids"] = list(self.player_ids)
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> IncidentScope:
        d = json.loads(text or "{}")
        when = {k: datetime.fromisoformat(d[k]) if d.get(k) else None for k in ("since", "until")}
        return cls(
            kind=d.get("kind", "all"),
            statuses=tuple(d.get("statuses", ())),
            item=d.get("item"),
            player_ids=tuple(d.get("player_ids", ())),
            **when,
        )

    def order_filter(self) -> Any:
        """The SQL condition on `orders` (joined to nothing) for the orders this scope covers."""
        conds: list[Any] = []
        if self.kind == "players":
            conds.append(Order.player_id.in_(self.player_ids or ("",)))
        if self.statuses:
            conds.append(Order.status.in_(self.statuses))
        if self.item:
            conds.append(Order.item.contains(self.item, autoescape=True))
        if self.since:
            conds.append(Order.ordered_at >= self.since)
        if self.until:
            conds.append(Order.ordered_at < self.until)
        return and_(*conds) if conds else None
