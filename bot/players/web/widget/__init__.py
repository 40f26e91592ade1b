"""The player's side of the web channel: the widget's chat routes, who the caller is (`callers`,
`identity`), rate limits, feedback and the widget's static files."""
