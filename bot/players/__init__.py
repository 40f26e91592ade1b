"""Players' channels: where a player writes to the bot (the Discord app, the web widget over SSE, the terminal)."""
