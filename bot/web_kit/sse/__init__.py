"""Server-sent events as both rooms send them: the one response helper (`response`), the wire shapes
(`wire`) and run steps cleaned for showing (`step_cleaning`)."""
