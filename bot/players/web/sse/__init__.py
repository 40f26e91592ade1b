"""A player's run as server-sent events: numbered events (`stream`), the registry of open streams
(`registry`) and staff replies published into a player's stream (`outbox`)."""
