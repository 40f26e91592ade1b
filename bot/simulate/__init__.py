"""Simulations (`arca-bot simulate`): a simulated player with a goal talks to the bot over the same
`Conversations` as every channel, and each run is graded by the end state of the database (coupons,
escalations, orders), reported as pass^k over k trials (τ-bench's measure)."""
