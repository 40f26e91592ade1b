"""An incident's scope when orders live in the studio's backend (ARCA_ORDER_SOURCE=http): before a
preview (and so before the approved run) its orders are read fresh from the backend — its paged order
search, or each player's orders for a scope of listed players (the players CSV of the declare form) —
and mirrored into the embedded table, which the preview and the bulk grant then read as usual."""

from __future__ import annotations

import logging

from bot.game.orders import OrderSource
from bot.store.incidents import IncidentRecord

log = logging.getLogger(__name__)

PLAYER_WINDOW = 100
"""Orders read per listed player (`GET /players/{id}/orders?limit=…`)."""


async def pull_scope(orders: OrderSource | None, incident: IncidentRecord) -> int:
    """Read the scope's orders fresh from the configured source (nothing to do for the builtin table);
    how many were read. Raises `SourceUnavailable` when the backend cannot answer (or offers no order
    search for a scope that is not a list of players): no preview is made on stale orders."""
    if orders is None or orders.name == "builtin":
        return 0
    scope = incident.scope
    read = 0
    if scope.kind == "players":
        for player_id in scope.player_ids:
            read += len((await orders.player_orders(player_id, limit=PLAYER_WINDOW)).orders)
    else:
        # The scope's window is by order date; an order placed in it was last updated after its start.
        async for page in orders.search(statuses=scope.statuses, since=scope.since):
            read += len(page)
    log.info("incident #%s: %d order(s) of its scope read from the game's backend", incident.id, read)
    return read
