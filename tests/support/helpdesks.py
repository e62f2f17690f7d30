"""Strict local stand-ins for the Zendesk and Freshdesk REST APIs (127.0.0.1, ephemeral port).

They enforce the documented request shapes and Basic auth, keep the comments/notes posted per ticket,
answer `cue`d statuses on demand (429 + Retry-After, 5xx, 401), may sleep after storing a note and
before answering (`hold_after_write`, for the worker-death test), and log every request.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class _Fake:
    product = "helpdesk"

    def __init__(self, user: str, password: str, tickets: set[int]) -> None:
        self.expected_auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.tickets = set(tickets)
        self.notes: dict[int, list[dict[str, Any]]] = {t: [] for t in tickets}
        self.cues: list[tuple[int, dict[str, str]]] = []  # answered instead of the next requests
        self.headers: dict[str, str] = {}  # added to every answer (e.g. rate-limit headers)
        self.hold_after_write = 0.0
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._next_id = 1000
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with fake.lock:
                    fake.requests.append({"method": self.command, "path": self.path, "at": time.time(),
                                          "headers": {k.lower(): v for k, v in self.headers.items()}})
                    cue = fake.cues.pop(0) if fake.cues else None
                if cue is not None:
                    return self._send(cue[0], {"error": "cued"}, cue[1])
                if self.headers.get("authorization") != fake.expected_auth:
                    return self._send(401, {"error": "Couldn't authenticate you"})
                status, payload, hold = fake.route(self.command, self.path, dict(self.headers.items()), body)
                if hold:
                    time.sleep(fake.hold_after_write)
                self._send(status, payload)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in {**fake.headers, **(headers or {})}.items():
                        self.send_header(name, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client (a killed worker) went away
                    pass

            do_GET = do_PUT = do_POST = _serve

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        self.base_url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, bool]:
        raise NotImplementedError

    def writes(self) -> int:
        return sum(1 for r in self.requests if r["method"] in ("PUT", "POST"))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _json_body(headers: dict[str, str], body: bytes) -> Any:
    if not headers.get("Content-Type", headers.get("content-type", "")).startswith("application/json"):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class ZendeskFake(_Fake):
    """``PUT /api/v2/tickets/{id}.json`` (a comment, tags) and ``GET /api/v2/tickets/{id}/comments.json``."""

    product = "Zendesk"

    def __init__(self, email: str, token: str, tickets: set[int]) -> None:
        super().__init__(f"{email}/token", token, tickets)
        self.tags: dict[int, list[str]] = {t: [] for t in tickets}

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, bool]:
        url = urlsplit(path)
        if method == "PUT" and (m := re.fullmatch(r"/api/v2/tickets/(\d+)\.json", url.path)):
            ticket = int(m.group(1))
            if ticket not in self.tickets:
                return 404, {"error": "RecordNotFound", "description": "Not found"}, False
            data = _json_body(headers, body)
            shape_ok = (
                isinstance(data, dict)
                and set(data) == {"ticket"}
                and isinstance(data["ticket"], dict)
                and set(data["ticket"]) <= {"comment", "additional_tags"}
                and isinstance(data["ticket"].get("comment"), dict)
                and set(data["ticket"]["comment"]) == {"html_body", "public"}
                and isinstance(data["ticket"]["comment"]["html_body"], str)
                and isinstance(data["ticket"]["comment"]["public"], bool)
                and all(isinstance(t, str) for t in data["ticket"].get("additional_tags", []))
            )
            if not shape_ok:
                return 422, {"error": "RecordInvalid", "description": "bad ticket update"}, False
            comment = {
                "id": self.new_id(),
                "type": "Comment",
                "html_body": data["ticket"]["comment"]["html_body"],
                "public": data["ticket"]["comment"]["public"],
                "created_at": time.time(),
            }
            with self.lock:
                self.notes[ticket].append(comment)
                self.tags[ticket] += data["ticket"].get("additional_tags", [])
            return (
                200,
                {
                    "ticket": {"id": ticket, "tags": self.tags[ticket]},
                    "audit": {"id": self.new_id(), "events": [{"type": "Comment", "id": comment["id"]}]},
                },
                True,
            )
        if method == "GET" and (m := re.fullmatch(r"/api/v2/tickets/(\d+)/comments\.json", url.path)):
            ticket = int(m.group(1))
            if ticket not in self.tickets:
                return 404, {"error": "RecordNotFound"}, False
            query = parse_qs(url.query)
            per_page = int(query.get("per_page", ["100"])[0])
            page = int(query.get("page", ["1"])[0])
            items = list(self.notes[ticket])
            if query.get("sort_order", ["asc"])[0] == "desc":
                items.reverse()
            chunk = items[(page - 1) * per_page: page * per_page]
            more = page * per_page < len(items)
            nxt = (f"{self.base_url}{url.path}?page={page + 1}&per_page={per_page}"
                   f"&sort_order={query.get('sort_order', ['asc'])[0]}") if more else None
            return 200, {"comments": chunk, "next_page": nxt, "count": len(items)}, False
        return 404, {"error": "InvalidEndpoint"}, False


class FreshdeskFake(_Fake):
    """``POST /api/v2/tickets/{id}/notes`` and ``GET /api/v2/tickets/{id}/conversations``."""

    product = "Freshdesk"

    def __init__(self, api_key: str, tickets: set[int]) -> None:
        super().__init__(api_key, "X", tickets)

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, bool]:
        url = urlsplit(path)
        if method == "POST" and (m := re.fullmatch(r"/api/v2/tickets/(\d+)/notes", url.path)):
            ticket = int(m.group(1))
            if ticket not in self.tickets:
                return 404, {"code": "access_denied"}, False
            data = _json_body(headers, body)
            if not (isinstance(data, dict) and set(data) <= {"body", "private", "notify_emails", "incoming"}
                    and isinstance(data.get("body"), str) and data["body"] and data.get("private") is True):
                return 400, {"description": "Validation failed", "errors": [{"field": "body"}]}, False
            note = {
                "id": self.new_id(),
                "body": data["body"],
                "body_text": re.sub(r"<[^>]+>", "", data["body"]),
                "private": True,
                "ticket_id": ticket,
                "created_at": time.time(),
            }
            with self.lock:
                self.notes[ticket].append(note)
            return 201, note, True
        if method == "GET" and (m := re.fullmatch(r"/api/v2/tickets/(\d+)/conversations", url.path)):
            ticket = int(m.group(1))
            if ticket not in self.tickets:
                return 404, {"code": "access_denied"}, False
            query = parse_qs(url.query)
            per_page = min(100, int(query.get("per_page", ["30"])[0]))
            page = int(query.get("page", ["1"])[0])
            return 200, self.notes[ticket][(page - 1) * per_page: page * per_page], False
        return 404, {"code": "invalid_url"}, False
