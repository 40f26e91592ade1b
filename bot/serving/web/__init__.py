"""The one web server: one FastAPI app (`app`) with the players' widget, the staff console under
`/staff`, the probes and the game's event endpoint; served by uvicorn on the bot's loop (`startup`)."""
