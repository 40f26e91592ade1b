"""The player's side of the web channel: the widget's chat routes, who the caller is (`callers`), rate
limits, feedback, notices and the widget's static files."""
