"""A fake OpenAI-compatible Chat Completions server on 127.0.0.1 for tests of the real SDK path.

Serves `POST /v1/chat/completions` as plain JSON or SSE (`stream: true`, tool-call deltas split
over chunks, a usage chunk), from a queue of scripted replies, with injectable faults: 429 with
Retry-After, 500, a hang, a garbage body, a stream cut mid-way. Records every request.

In-process: `async with FakeOpenAIServer([...]) as server: server.base_url`.
Standalone: `python -m tests.fakes.openai_server --port 8123 --script replies.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from aiohttp import web

FAULTS = ("429", "500", "hang", "garbage", "cut")


def reply(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning_content: str | None = None,
    usage: dict[str, int] | None = None,
    chunk_delay: float = 0.0,
) -> dict[str, Any]:
    """A scripted reply. `tool_calls` entries: {"id"?, "name", "arguments" (str or dict)}.
    `chunk_delay`: seconds between streamed chunks (a model generating slowly)."""
    out: dict[str, Any] = {"content": content}
    if chunk_delay:
        out["chunk_delay"] = chunk_delay
    if tool_calls:
        out["tool_calls"] = tool_calls
    if reasoning_content:
        out["reasoning_content"] = reasoning_content
    if usage:
        out["usage"] = usage
    return out


def fault(kind: str, **options: Any) -> dict[str, Any]:
    """A scripted failure: `429` (retry_after), `500`, `hang` (seconds), `garbage`, `cut` (after_chunks)."""
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
    return {"fault": kind, **options}


def _tool_calls(entry: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for i, tc in enumerate(entry.get("tool_calls") or []):
        args = tc.get("arguments", {})
        calls.append(
            {
                "id": tc.get("id") or f"call_fake_{uuid.uuid4().hex[:8]}_{i}",
                "type": "function",
                "function": {
                    "name": tc["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                },
            }
        )
    return calls


def _usage(entry: dict[str, Any], body: dict[str, Any]) -> dict[str, int]:
    if entry.get("usage"):
        u = dict(entry["usage"])
    else:
        prompt_chars = len(json.dumps(body.get("messages", []), ensure_ascii=False))
        u = {
            "prompt_tokens": prompt_chars // 4 + 1,
            "completion_tokens": len(entry.get("content") or "") // 4 + 1,
        }
    u.setdefault("total_tokens", u["prompt_tokens"] + u["completion_tokens"])
    return u


class FakeOpenAIServer:
    """The fake endpoint. `replies` is consumed one per request (a retried request takes the next)."""

    def __init__(
        self,
        replies: list[dict[str, Any]] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_reply: dict[str, Any] | None = None,
        chunk_chars: int = 3,
    ) -> None:
        self.replies: deque[dict[str, Any]] = deque(replies or [])
        self.default_reply = default_reply
        self.host = host
        self.port = port
        self.chunk_chars = chunk_chars
        self.requests: list[dict[str, Any]] = []
        """Every request body received (JSON), in order."""
        self.headers: list[dict[str, str]] = []
        self.abandoned_streams = 0
        """Streams the client closed before their end (a write to its connection failed)."""
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def enqueue(self, *entries: dict[str, Any]) -> None:
        self.replies.extend(entries)

    async def start(self) -> FakeOpenAIServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server  # aiohttp keeps the bound socket here; needed for the ephemeral port
        if self.port == 0 and server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- handlers ---------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not JSON")
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.replies:
            entry = self.replies.popleft()
        elif self.default_reply is not None:
            entry = self.default_reply
        else:
            return _error(400, "fake server: no scripted reply left")
        kind = entry.get("fault")
        if kind == "429":
            return web.json_response(
                {
                    "error": {
                        "message": "Rate limit reached",
                        "type": "rate_limit_error",
                        "code": "rate_limit",
                    }
                },
                status=429,
                headers={"Retry-After": str(entry.get("retry_after", 0.05))},
            )
        if kind == "500":
            return _error(500, entry.get("message", "internal server error"))
        if kind == "hang":
            try:
                await asyncio.wait_for(self._closing.wait(), entry.get("seconds", 30.0))
            except TimeoutError:
                pass
            return _error(504, "hung")
        if kind == "garbage":
            return web.Response(text="<<this is not json>>{{", content_type="application/json")
        if body.get("stream"):
            return await self._stream(request, body, entry)
        return web.json_response(self._completion(body, entry))

    def _completion(self, body: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        calls = _tool_calls(entry)
        message: dict[str, Any] = {"role": "assistant", "content": entry.get("content")}
        if calls:
            message["tool_calls"] = calls
        if entry.get("reasoning_content"):
            message["reasoning_content"] = entry["reasoning_content"]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": _usage(entry, body),
        }

    async def _stream(
        self, request: web.Request, body: dict[str, Any], entry: dict[str, Any]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
        }
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        n = self.chunk_chars
        reasoning = entry.get("reasoning_content") or ""
        chunks += [{"reasoning_content": reasoning[i : i + n]} for i in range(0, len(reasoning), n)]
        content = entry.get("content") or ""
        chunks += [{"content": content[i : i + n]} for i in range(0, len(content), n)]
        for index, tc in enumerate(_tool_calls(entry)):
            args = tc["function"]["arguments"]
            chunks.append(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": tc["id"],
                            "type": "function",
                            "function": {"name": tc["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            chunks += [
                {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + n]}}]}
                for i in range(0, len(args), n)
            ]
        cut_after = entry.get("after_chunks", 2) if entry.get("fault") == "cut" else None
        for sent, delta in enumerate(chunks):
            if cut_after is not None and sent >= cut_after:
                # Drop the connection without finishing the chunked body: the client sees a broken stream.
                if request.transport is not None:
                    request.transport.close()
                return resp
            if entry.get("chunk_delay"):
                await asyncio.sleep(entry["chunk_delay"])
            try:
                await resp.write(
                    _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                )
            except ConnectionError:  # the client closed the stream: a real server stops generating here
                self.abandoned_streams += 1
                return resp
        finish = "tool_calls" if entry.get("tool_calls") else "stop"
        await resp.write(_sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
        if (body.get("stream_options") or {}).get("include_usage"):
            await resp.write(_sse({**base, "choices": [], "usage": _usage(entry, body)}))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "server_error", "code": None}}, status=status
    )


async def _serve(port: int, script: Path | None, default_content: str | None) -> None:
    replies = json.loads(script.read_text(encoding="utf-8")) if script else []
    default = reply(default_content) if default_content is not None else None
    server = FakeOpenAIServer(replies, port=port, default_reply=default)
    await server.start()
    print(f"fake OpenAI server listening on {server.base_url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server on 127.0.0.1 (tests only).")
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: any free port)")
    parser.add_argument("--script", type=Path, help="JSON file: a list of replies / faults, served in order")
    parser.add_argument(
        "--default", dest="default_content", help="content to answer with once the script is used up"
    )
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args.port, args.script, args.default_content))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
