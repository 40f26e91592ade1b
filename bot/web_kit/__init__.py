"""What both rooms on the one web server share below them: the server's collaborators (`deps`), a web
caller's identity, JSON bodies and body limits, attachment responses, readiness probes and the SSE
plumbing (`sse`: the response, the wire shapes, cleaned steps)."""
