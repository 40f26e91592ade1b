"""What the serve tests share: a web secret and a free loopback port."""

from __future__ import annotations

import socket

SECRET = "serve-test-secret-0123456789abcdef0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
