"""How far an incident's bulk compensation is, read from the store alone, so any process (the Discord
card, the console bar, the staff web console) shows the same figures while a run goes on elsewhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.store import Store

BAR_WIDTH = 20


@dataclass(frozen=True)
class RunProgress:
    """One incident's compensation as it stands in the store."""

    incident_id: int
    state: str | None
    """`previewed`, `approved` (issuing, or interrupted and resumable), `done`, `cancelled`; None: no plan."""
    total: int
    """Targets in scope: orders (per order) or players (per player)."""
    issued: int
    """Live coupons under this incident's keys (every run's, this process's or another's)."""
    excluded: int
    """Targets left out, with a stored reason."""
    spent: int
    """KRW those coupons hold."""
    batches: int
    """Grant batches written so far."""
    budget: int | None = None

    @property
    def done(self) -> int:
        """Targets decided: issued or excluded."""
        return min(self.issued + self.excluded, max(self.total, self.issued + self.excluded))

    @property
    def fraction(self) -> float:
        """0.0–1.0 of the targets decided (1.0 when the run is done or nothing is in scope)."""
        if self.state == "done" or self.total <= 0:
            return 1.0
        return min(1.0, self.done / self.total)

    def bar(self, width: int = BAR_WIDTH) -> str:
        """`▓▓▓▓▓░░░░░ 50%`: the bar the Discord card and the console draw."""
        filled = round(self.fraction * width)
        return "▓" * filled + "░" * (width - filled) + f" {self.fraction:.0%}"

    def text(self) -> str:
        """One line for staff: `발급 1,200 / 10,000 · 제외 3 · 배치 3 · 6,000,000원`."""
        return (
            f"발급 / issued {self.issued:,} / {self.total:,} · 제외 / excluded {self.excluded:,} · "
            f"배치 / batches {self.batches:,} · {self.spent:,}원"
        )


async def progress(store: Store, incident_id: int) -> RunProgress | None:
    """The incident's compensation progress now (None: no such incident)."""
    incident = await store.incidents.get(incident_id)
    if incident is None:
        return None
    summary = await store.incidents.grant_summary(incident_id)
    excluded, batches = await store.incidents.run_counts(incident_id)
    per = incident.comp_per or "order"
    if per == "order":
        total = await store.incidents.count_orders(incident)
    else:
        total = len(await store.incidents.targets(incident, per))
    return RunProgress(
        incident_id=incident_id,
        state=incident.comp_state,
        total=total,
        issued=summary.coupons,
        excluded=excluded,
        spent=summary.spent,
        batches=batches,
        budget=incident.comp_budget,
    )
