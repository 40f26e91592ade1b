"""Server-sent events for both audiences: a run as numbered events (`stream`), their wire shapes
(`wire`), the registry of open streams (`registry`), staff replies published into a player's stream
(`outbox`) and the one SSE response helper (`response`)."""
