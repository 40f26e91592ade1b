"""How a URL is shown to a person: the one place that hides the password inside it.

Every message that prints a URL (doctor, configuration errors, store errors, logs) goes through
`redact_url` (one URL) or `redact_urls` (free text), so `http://user:PASS@host` never reaches a screen.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

HIDDEN = "***"

_SECRET_QUERY_KEYS = re.compile(r"(?i)(key|token|secret|password|passwd|pwd|auth)")
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]+")


def redact_url(url: str) -> str:
    """`url` with the password of its user part and secret-named query values replaced by `***`.

    `postgresql+asyncpg://arca:pw@db:5432/arca` → `postgresql+asyncpg://arca:***@db:5432/arca`;
    a value without a scheme (`user:pw@host:8000`, as Chroma accepts) is treated the same way.
    """
    text = url.strip()
    bare = "://" not in text
    try:
        parts = urlsplit(f"//{text}" if bare else text)
        netloc = parts.netloc
        changed = False
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            if ":" in userinfo:
                netloc, changed = f"{user}:{HIDDEN}@{host}", True
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(_SECRET_QUERY_KEYS.search(k) for k, _ in pairs):
                changed = True
                query = urlencode(
                    [(k, HIDDEN if _SECRET_QUERY_KEYS.search(k) else v) for k, v in pairs], safe="*"
                )
        if not changed:
            return text
        shown = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # unparsable: show the scheme only
        return text.split(":", 1)[0] + ":…"
    return shown.removeprefix("//") if bare else shown


def redact_urls(text: str) -> str:
    """Free text with every `scheme://…` URL in it passed through `redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
