"""The game connection (DESIGN.md §11): orders read from the studio's backend, coupons granted into the
game exactly once through a transactional outbox, and the signed events the game sends (orders, players,
self-service account links)."""
