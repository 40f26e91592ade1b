"""The marker that opens the message injected into a run when the player writes while it works (seed 000:
`[USER INTERRUPT] …`). The model reads it, the transcripts keep it, and the web page takes it off again
before it shows the player's words (`static/widget.js` holds the one browser-side copy, checked against
this one by a test)."""

from __future__ import annotations

INTERRUPT_PREFIX = "[USER INTERRUPT]"
