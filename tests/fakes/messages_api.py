"""A local HTTP server that speaks the Anthropic Messages API, for the real `anthropic` SDK to talk to.

It records every request, answers with scripted replies (tool_use, text, errors such as 429 with
retry-after and 529 overloaded, slow replies for timeouts, malformed bodies), streams SSE events when
asked, and bills realistic `usage` (input tokens estimated from the request, cache writes/reads of the
marked prefix). Unscripted requests go to a *brain*: by default one that makes Sleuth's heuristic
decisions from the fenced prompt, so a whole investigation runs as it would against a model.

    python -m tests.fakes.messages_api serve --port 8765 [--embedder minilm]   # for `sleuth bench`
    python -m tests.fakes.messages_api report --home DIR                     # usage/cost per investigation

Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# -- replies -------------------------------------------------------------------------------------------


@dataclass
class Tool:
    """A tool_use reply; `name` defaults to the (first) tool the request offered."""

    input: Any
    name: str | None = None
    text_before: str = ""
    stop_reason: str = "tool_use"


@dataclass
class Text:
    text: str
    stop_reason: str = "end_turn"


@dataclass
class Error:
    """An API error: 429 rate_limit_error, 529 overloaded_error, 500 api_error, 400 invalid_request_error…"""

    status: int
    type: str
    message: str = "scripted error"
    retry_after: float | None = None
    details: dict[str, Any] | None = None


@dataclass
class Slow:
    """Sleep before answering (longer than the client's timeout = a timeout)."""

    seconds: float
    then: Any = None


@dataclass
class Malformed:
    body: bytes = b'{"type": "message", "content": [ this is not json'
    status: int = 200


Reply = Tool | Text | Error | Slow | Malformed


def rate_limited(retry_after: float | None = 1.0) -> Error:
    return Error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit",
                 retry_after=retry_after)


def overloaded(retry_after: float | None = None) -> Error:
    return Error(529, "overloaded_error", "Overloaded", retry_after=retry_after)


# -- recorded requests ---------------------------------------------------------------------------------

STEP_OF_TOOL = {"record_route": "route", "record_plan": "plan", "record_grades": "grade",
                "record_judgment": "judge", "record_next_queries": "next_queries"}


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def step(self) -> str:
        if self.tools:
            name = str(self.tools[0]["name"])
            return STEP_OF_TOOL.get(name, name)
        system = system_text(self.body)
        return "direct" if "reply to small talk" in system else "synthesize"

    @property
    def user(self) -> str:
        return user_text(self.body)


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def user_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(b.get("text", "") for b in content or [] if isinstance(b, dict))
    return "\n".join(parts)


# -- usage ---------------------------------------------------------------------------------------------


@dataclass
class Billing:
    """Token estimates: ~3.5 characters per token, the tool-use system prompt overhead the API adds when
    tools are offered, and prompt-cache writes/reads of the prefix up to the last cache_control marker."""

    chars_per_token: float = 3.5
    tool_overhead: int = 346
    min_cache_tokens: int = 1024
    cache_ttl: float = 300.0
    cache: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tokens(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token) if text else 0

    def bill(self, body: dict[str, Any], output: str) -> dict[str, int]:
        tools = json.dumps(body.get("tools") or [], sort_keys=True)
        tool_tokens = (self.tokens(tools) + self.tool_overhead) if body.get("tools") else 0
        system = body.get("system") or []
        blocks = [{"text": system}] if isinstance(system, str) else list(system)
        marked = max((i for i, b in enumerate(blocks) if b.get("cache_control")), default=-1)
        prefix_text = "".join(b.get("text", "") for b in blocks[: marked + 1])
        rest_text = "".join(b.get("text", "") for b in blocks[marked + 1:])
        prefix = tool_tokens + self.tokens(prefix_text) if marked >= 0 else 0
        total = tool_tokens + self.tokens(prefix_text) + self.tokens(rest_text) + \
            self.tokens(user_text(body)) + 4 * len(body.get("messages", []))
        read = write = 0
        if marked >= 0 and prefix >= self.min_cache_tokens:
            key = hashlib.sha256(f"{body.get('model')}\n{tools}\n{prefix_text}".encode()).hexdigest()
            now = time.monotonic()
            with self.lock:
                if self.cache.get(key, 0.0) > now:
                    read = prefix
                else:
                    write = prefix
                self.cache[key] = now + self.cache_ttl  # a hit refreshes the entry
        return {"input_tokens": total - read - write, "output_tokens": max(1, self.tokens(output)),
                "cache_creation_input_tokens": write, "cache_read_input_tokens": read}


# -- the server ----------------------------------------------------------------------------------------

Brain = Callable[[Recorded], Reply]


class FakeMessagesAPI:
    """`with FakeMessagesAPI() as api:` → `api.url` for ANTHROPIC_BASE_URL; `api.requests` afterwards."""

    def __init__(self, brain: Brain | None = None, *, billing: Billing | None = None, port: int = 0) -> None:
        self.brain = brain
        self.billing = billing or Billing()
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._by_step: dict[str, deque[Reply]] = {}
        self._after: tuple[int, Callable[[], Reply]] | None = None
        self.ok = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-messages-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # scripting
    def script(self, *replies: Reply) -> None:
        """Replies for the next requests, in order (before any per-step script or the brain)."""
        with self._lock:
            self._queue.extend(replies)

    def script_step(self, step: str, *replies: Reply) -> None:
        """Replies for the next requests of one step (route, plan, grade, judge, next_queries, synthesize)."""
        with self._lock:
            self._by_step.setdefault(step, deque()).extend(replies)

    def fail_after(self, ok: int, reply: Callable[[], Reply]) -> None:
        """Once `ok` requests have been answered successfully in total, answer every request with
        `reply()`."""
        with self._lock:
            self._after = (ok, reply)

    def recover(self) -> None:
        """Stop failing (undo `fail_after`)."""
        with self._lock:
            self._after = None

    def calls(self, step: str | None = None) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if step is None or r.step == step]

    def stats(self) -> dict[str, Any]:
        """Billed usage by step and model, of the successful requests."""
        out: dict[str, Any] = {}
        for r in self.calls():
            if r.status != 200:
                continue
            row = out.setdefault(r.step, {"calls": 0, "models": [], "input_tokens": 0, "output_tokens": 0,
                                          "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
            row["calls"] += 1
            if r.body.get("model") not in row["models"]:
                row["models"].append(r.body.get("model"))
            for key, value in r.usage.items():
                row[key] += value
        return out

    def _next_reply(self, record: Recorded) -> Reply:
        with self._lock:
            if self._after is not None and self.ok >= self._after[0]:
                return self._after[1]()
            if self._queue:
                return self._queue.popleft()
            queue = self._by_step.get(record.step)
            if queue:
                return queue.popleft()
        if self.brain is None:
            raise LookupError(f"no scripted reply for a {record.step} request and no brain")
        return self.brain(record)


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            if self.path == "/_fake/stats":
                self._json(200, api.stats())
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(
                    400, {"type": "error", "error": {"type": "invalid_request_error", "message": "json"}}
                )
                return
            record = Recorded(self.path.split("?")[0], {k.lower(): v for k, v in self.headers.items()}, body)
            with api._lock:
                api.requests.append(record)
            if record.path != "/v1/messages":
                record.status = 404
                self._json(
                    404, {"type": "error", "error": {"type": "not_found_error", "message": record.path}}
                )
                return
            try:
                reply = api._next_reply(record)
                self._answer(record, reply)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout test)

        def _answer(self, record: Recorded, reply: Any) -> None:
            while isinstance(reply, Slow):
                time.sleep(reply.seconds)
                reply = reply.then if reply.then is not None else api._next_reply(record)
            if callable(reply) and not isinstance(reply, Tool | Text | Error | Malformed):
                reply = reply(record)
            if isinstance(reply, Error):
                record.status = reply.status
                error: dict[str, Any] = {"type": reply.type, "message": reply.message}
                if reply.details:
                    error["details"] = reply.details
                headers = {"retry-after": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
                self._json(reply.status, {"type": "error", "error": error, "request_id": "req_fake"}, headers)
                return
            if isinstance(reply, Malformed):
                record.status = reply.status
                self._raw(reply.status, reply.body, "application/json")
                return
            content, output, stop = _content(record, reply)
            record.usage = api.billing.bill(record.body, output)
            record.status = 200
            with api._lock:
                api.ok += 1
                number = api.ok
            message = {"id": f"msg_fake_{number}", "type": "message", "role": "assistant",
                       "model": record.body.get("model"), "content": content, "stop_reason": stop,
                       "stop_sequence": None, "usage": record.usage}
            if record.body.get("stream"):
                self._stream(message)
            else:
                self._json(200, message, {"request-id": f"req_fake_{number}"})

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            usage = dict(message["usage"])
            start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
            self.wfile.write(_sse("message_start", {"type": "message_start", "message": start}))
            self.wfile.write(_sse("ping", {"type": "ping"}))
            for index, block in enumerate(message["content"]):
                if block["type"] == "text":
                    self.wfile.write(
                        _sse(
                            "content_block_start",
                            {
                                "type": "content_block_start",
                                "index": index,
                                "content_block": {"type": "text", "text": ""},
                            },
                        )
                    )
                    for piece in re.findall(r"\S+\s*|\s+", block["text"]):
                        self.wfile.write(_sse("content_block_delta", {
                            "type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": piece}}))
                        self.wfile.flush()
                else:
                    self.wfile.write(_sse("content_block_start", {
                        "type": "content_block_start", "index": index,
                        "content_block": {**block, "input": {}}}))
                    self.wfile.write(_sse("content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
                self.wfile.write(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            self.wfile.write(
                _sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                        "usage": {"output_tokens": usage["output_tokens"]},
                    },
                )
            )
            self.wfile.write(_sse("message_stop", {"type": "message_stop"}))
            self.wfile.flush()
            self.close_connection = True

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._raw(status, json.dumps(payload).encode(), "application/json", headers)

        def _raw(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _content(record: Recorded, reply: Any) -> tuple[list[dict[str, Any]], str, str]:
    """(content blocks, text the output tokens are billed on, stop_reason)."""
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}], reply.text, reply.stop_reason
    if isinstance(reply, Tool):
        name = reply.name or (record.tools[0]["name"] if record.tools else "unknown_tool")
        blocks: list[dict[str, Any]] = []
        if reply.text_before:
            blocks.append({"type": "text", "text": reply.text_before})
        blocks.append({"type": "tool_use", "id": f"toolu_fake_{len(record.body)}", "name": name,
                       "input": reply.input})
        billed = reply.text_before + name + json.dumps(reply.input)
        return blocks, billed, reply.stop_reason
    raise TypeError(f"not a reply: {reply!r}")


if __name__ == "__main__":  # pragma: no cover - a command-line tool
    from tests.fakes.messages_cli import main

    main()
