"""A local server speaking the Anthropic Messages API that answers every request with a 429 (rate limited,
with `retry-after`) or a 529 (overloaded), in turn: an LLM provider storm. It records each request's time,
status and the `(case N)` marker of the question in its prompt, so requests are counted per investigation."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASE = re.compile(r"\(case (\d+)\)")


@dataclass(frozen=True)
class Hit:
    at: float
    status: int
    case: str | None  # the question's "(case N)" marker, when the prompt carries it
    retry_after: float | None


class StormServer:
    """Every POST /v1/messages: 429 with `retry-after: {retry_after}` or 529 overloaded, alternating."""

    def __init__(self, retry_after: float = 1.0) -> None:
        self.retry_after = retry_after
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode(errors="replace")
                match = CASE.search(body)
                with owner._lock:
                    n = len(owner.hits)
                    status = 429 if n % 2 == 0 else 529
                    wait = owner.retry_after if status == 429 else None
                    owner.hits.append(Hit(time.monotonic(), status, match.group(1) if match else None, wait))
                kind = "rate_limit_error" if status == 429 else "overloaded_error"
                payload = json.dumps(
                    {"type": "error", "error": {"type": kind, "message": "chaos storm"}}
                ).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                if wait is not None:
                    self.send_header("retry-after", f"{wait:g}")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def by_case(self) -> dict[str, list[Hit]]:
        with self._lock:
            hits = list(self.hits)
        out: dict[str, list[Hit]] = {}
        for hit in hits:
            out.setdefault(hit.case or "?", []).append(hit)
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def busiest_second(hits: list[Hit]) -> int:
    """The most requests within any 1-second window (a tight retry loop shows up here)."""
    times = sorted(h.at for h in hits)
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] > 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best


def shortest_wait_after_retry_after(hits: list[Hit]) -> float | None:
    """Of consecutive requests of one investigation, the shortest gap after a reply that said retry-after
    (divided by what it asked: >= 1.0 means every retry-after was honoured)."""
    ordered = sorted(hits, key=lambda h: h.at)
    ratios = [(b.at - a.at) / a.retry_after for a, b in itertools.pairwise(ordered)
              if a.retry_after]
    return round(min(ratios), 2) if ratios else None
