"""Delivery into the game, exactly once (DESIGN.md §11.2): the worker that posts the outbox's grants and
revokes (`worker`), its HTTP side (`poster`), its caps and retries (`pacing`), the staff alert per burst
of dead letters (`alerts`), and how a process runs one (`running`)."""

from bot.game.delivery.alerts import DeadLetterAlert
from bot.game.delivery.pacing import RateCap, RetryPolicy
from bot.game.delivery.poster import GrantPoster, PostResult, classify
from bot.game.delivery.worker import DeliveryCaps, DeliveryWorker

__all__ = [
    "DeadLetterAlert",
    "DeliveryCaps",
    "DeliveryWorker",
    "GrantPoster",
    "PostResult",
    "RateCap",
    "RetryPolicy",
    "classify",
]
