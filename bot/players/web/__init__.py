"""Players on the web: the chat widget's routes (`widget`) and a run streamed as server-sent events
(`sse`). The server that serves them beside the staff console is `bot.serving.web`'s."""
