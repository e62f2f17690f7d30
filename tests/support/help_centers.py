"""Strict local stand-ins for Zendesk Guide's and Freshdesk Solutions' read APIs (127.0.0.1, ephemeral port).

Zendesk: the incremental article export (`start_time` required, `next_page`/`end_time`/`count`), the article
list with cursor pagination (`page[size]` ≤ 100, `page[after]`, `meta.has_more`, `links.next`), user segments.
Freshdesk: solution categories, their folders (`visibility`), each folder's articles (`page`, `per_page` ≤
100). Basic auth is checked (401), `forbidden` answers 403, `cues` answer the next requests (429 +
Retry-After, 5xx). A logical clock stamps every change, so an export sees exactly what changed after its start
time.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

EXPORT_PAGE = 100  # Zendesk sends up to 1,000 per export page; smaller here so pagination is exercised


def segments_of(path: str) -> list[str]:
    return path.split("/")


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class HelpCenter:
    """Both fakes on one server (paths do not overlap). Articles are dicts in Zendesk's or Freshdesk's
    shape."""

    def __init__(self, *, zendesk_auth: tuple[str, str] = ("bot@acme.test/token", "zd-token"),
                 freshdesk_auth: tuple[str, str] = ("fd-key", "X")) -> None:
        self.auth = {name: "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode()
                     for name, (u, p) in (("zendesk", zendesk_auth), ("freshdesk", freshdesk_auth))}
        self.clock = int(time.time()) - 86400  # a day ago: inside a ticket source's --since window
        self.zd: dict[int, dict[str, Any]] = {}
        self.segments: list[dict[str, Any]] = [
            {"id": 501, "name": "Agents and admins", "user_type": "staff", "built_in": True},
            {"id": 502, "name": "Signed-in users", "user_type": "signed_in_users", "built_in": True}]
        self.categories: list[dict[str, Any]] = []
        self.folders: dict[int, list[dict[str, Any]]] = {}
        self.fd: dict[int, list[dict[str, Any]]] = {}  # folder id -> articles
        self.tickets: dict[int, dict[str, Any]] = {}  # Zendesk tickets (with comments and users)
        self.users = [
            {"id": 1, "role": "end-user", "name": "Requester"},
            {"id": 2, "role": "agent", "name": "Ana"},
            {"id": 3, "role": "agent", "name": "Sleuth bot"},
        ]
        self.fd_tickets: dict[int, dict[str, Any]] = {}  # Freshdesk tickets (with conversations)
        self.cues: list[tuple[int, dict[str, str]]] = []
        self.fail_once: dict[str, int] = {}  # the first request whose path holds the key gets that status
        self.forbidden = False
        self.requests: list[str] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with fake.lock:
                    fake.requests.append(self.path)
                    cue = fake.cues.pop(0) if fake.cues else None
                    for part, status in list(fake.fail_once.items()):
                        if cue is None and part in self.path:
                            cue = (status, {})
                            del fake.fail_once[part]
                if cue is not None:
                    return self._send(cue[0], {"error": "cued"}, cue[1])
                zendesk = "help_center" in self.path or ".json" in self.path
                product = "zendesk" if zendesk else "freshdesk"
                if self.headers.get("authorization") != fake.auth[product]:
                    return self._send(401, {"error": "Couldn't authenticate you"})
                if fake.forbidden:
                    return self._send(403, {"error": "Forbidden"})
                with fake.lock:
                    status, payload = fake.route(self.path)
                self._send(status, payload)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    # -- Zendesk ---------------------------------------------------------------------------------------

    def zd_put(
        self,
        article_id: int,
        *,
        title: str | None = None,
        body: str | None = None,
        draft: bool | None = None,
        user_segment_id: Any = "keep",
        locale: str = "en-us",
    ) -> None:
        """Create or change an article (its `updated_at` moves, as Zendesk's does on any metadata change)."""
        with self.lock:
            now = self.tick()
            article = self.zd.setdefault(article_id, {
                "id": article_id, "url": f"{self.url}/api/v2/help_center/{locale}/articles/{article_id}.json",
                "html_url": f"https://acme.zendesk.com/hc/{locale}/articles/{article_id}", "author_id": 7,
                "comments_disabled": False, "draft": False, "promoted": False, "position": 0, "vote_sum": 0,
                "vote_count": 0, "section_id": 360001, "created_at": _iso(now), "name": "", "title": "",
                "source_locale": locale, "locale": locale, "outdated": False, "outdated_locales": [],
                "permission_group_id": 9, "content_tag_ids": [], "label_names": [], "user_segment_id": None,
                "body": ""})
            for key, value in (("title", title), ("body", body), ("draft", draft)):
                if value is not None:
                    article[key] = value
            if title is not None:
                article["name"] = title
            if user_segment_id != "keep":
                article["user_segment_id"] = user_segment_id
            article["updated_at"] = article["edited_at"] = _iso(now)
            article["_ts"] = now

    def zd_delete(self, article_id: int) -> None:
        """Deleted or archived: gone from the export and from the list."""
        with self.lock:
            self.zd.pop(article_id, None)

    def _public(self, article: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in article.items() if not k.startswith("_")}

    def route(self, path: str) -> tuple[int, Any]:
        parts = urlsplit(path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/api/v2/help_center/incremental/articles":
            return self._export(query)
        if parts.path in ("/api/v2/help_center/articles", "/api/v2/help_center/en-us/articles"):
            return self._list(parts.path, query)
        if parts.path == "/api/v2/help_center/user_segments":
            return 200, {"user_segments": self.segments, "next_page": None, "count": len(self.segments)}
        if parts.path == "/api/v2/incremental/tickets/cursor.json":
            return self._ticket_export(query)
        if parts.path.startswith("/api/v2/tickets/") and parts.path.endswith("/comments.json"):
            ticket = self.tickets.get(int(segments_of(parts.path)[-2]))
            if ticket is None:
                return 404, {"error": "RecordNotFound"}
            if query.get("include") != "users":
                return 400, {"error": "expected include=users"}
            return 200, {"comments": ticket["_comments"], "users": self.users, "next_page": None,
                         "previous_page": None, "count": len(ticket["_comments"])}
        if parts.path == "/api/v2/tickets":
            return self._fd_ticket_list(query)
        if parts.path.startswith("/api/v2/tickets/") and parts.path.endswith("/conversations"):
            fd = self.fd_tickets.get(int(segments_of(parts.path)[-2]))
            return (200, fd["_conversations"]) if fd else (404, {"code": "not_found"})
        if parts.path == "/api/v2/solutions/categories":
            return 200, self.categories
        segments = parts.path.split("/")
        if parts.path.startswith("/api/v2/solutions/categories/") and segments[-1] == "folders":
            return 200, self.folders.get(int(segments[-2]), [])
        if parts.path.startswith("/api/v2/solutions/folders/") and segments[-1] == "articles":
            return self._fd_articles(int(segments[-2]), query)
        return 404, {"error": "RecordNotFound"}

    def _export(self, query: dict[str, str]) -> tuple[int, Any]:
        if not query.get("start_time", "").isdigit():
            return 400, {"error": "InvalidPaginationParameter", "description": "start_time is required"}
        start = int(query["start_time"])
        changed = sorted((a for a in self.zd.values() if a["_ts"] > start), key=lambda a: a["_ts"])
        page = changed[:EXPORT_PAGE]
        end_time = page[-1]["_ts"] if page else start
        more = len(changed) > EXPORT_PAGE
        nxt = f"{self.url}/api/v2/help_center/incremental/articles?start_time={end_time}" if more else None
        return 200, {"articles": [self._public(a) for a in page], "next_page": nxt, "count": len(page),
                     "end_time": end_time}

    def _list(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        size = int(query.get("page[size]", "30"))
        if not 1 <= size <= 100:
            return 400, {"error": "InvalidPaginationParameter", "description": "page[size] must be 1-100"}
        after = int(query.get("page[after]", "0") or 0)
        rows = sorted(a["id"] for a in self.zd.values() if a["id"] > after)
        page = rows[:size]
        has_more = len(rows) > size
        nxt = (
            f"{self.url}{path}?{urlencode({'page[size]': size, 'page[after]': page[-1]})}"
            if has_more
            else None
        )
        return 200, {"articles": [self._public(self.zd[i]) for i in page],
                     "meta": {"has_more": has_more, "after_cursor": str(page[-1]) if page else None,
                              "before_cursor": str(page[0]) if page else None},
                     "links": {"first": None, "last": None, "next": nxt, "prev": None}}

    def zd_ticket(
        self, ticket_id: int, *, subject: str, status: str, comments: list[tuple[int, bool, str]]
    ) -> None:
        """A ticket and its comments as (author id, public, body)."""
        with self.lock:
            now = self.tick()
            self.tickets[ticket_id] = {
                "id": ticket_id,
                "url": f"{self.url}/api/v2/tickets/{ticket_id}.json",
                "subject": subject,
                "description": comments[0][2] if comments else "",
                "status": status,
                "requester_id": 1,
                "created_at": _iso(now),
                "updated_at": _iso(now),
                "generated_timestamp": now,
                "_ts": now,
                "_comments": [
                    {
                        "id": ticket_id * 100 + i,
                        "type": "Comment",
                        "author_id": a,
                        "public": p,
                        "body": b,
                        "html_body": f"<p>{b}</p>",
                        "plain_body": b,
                        "created_at": _iso(now),
                    }
                    for i, (a, p, b) in enumerate(comments)
                ],
            }

    def _ticket_export(self, query: dict[str, str]) -> tuple[int, Any]:
        if "cursor" in query:
            start = int(query["cursor"])
        elif query.get("start_time", "").isdigit():
            start = int(query["start_time"])
        else:
            return 400, {"error": "InvalidPaginationParameter", "description": "start_time or cursor"}
        changed = sorted((t for t in self.tickets.values() if t["_ts"] > start), key=lambda t: t["_ts"])
        page = changed[:EXPORT_PAGE]
        after = str(page[-1]["_ts"] if page else start)
        return 200, {"tickets": [self._public(t) for t in page], "after_cursor": after,
                     "after_url": f"{self.url}/api/v2/incremental/tickets/cursor.json?cursor={after}",
                     "before_cursor": None, "before_url": None, "end_of_stream": len(changed) <= EXPORT_PAGE}

    def fd_ticket(self, ticket_id: int, *, subject: str, status: int,
                  conversations: list[tuple[bool, bool, str]]) -> None:
        """A Freshdesk ticket and its conversations as (incoming, private, body)."""
        with self.lock:
            now = self.tick()
            self.fd_tickets[ticket_id] = {
                "id": ticket_id,
                "subject": subject,
                "status": status,
                "priority": 1,
                "requester_id": 1,
                "created_at": _iso(now),
                "updated_at": _iso(now),
                "_conversations": [
                    {
                        "id": ticket_id * 100 + i,
                        "incoming": inc,
                        "private": priv,
                        "body": f"<div>{b}</div>",
                        "body_text": b,
                        "user_id": 1 if inc else 2,
                        "source": 0,
                        "created_at": _iso(now),
                    }
                    for i, (inc, priv, b) in enumerate(conversations)
                ],
            }

    def _fd_ticket_list(self, query: dict[str, str]) -> tuple[int, Any]:
        per_page, page = int(query.get("per_page", "30")), int(query.get("page", "1"))
        if not 1 <= per_page <= 100 or "updated_since" not in query:
            return 400, {"description": "Validation failed"}
        since = query["updated_since"]
        rows = sorted((t for t in self.fd_tickets.values() if t["updated_at"] >= since),
                      key=lambda t: (t["updated_at"], t["id"]))
        return 200, [self._public(t) for t in rows[(page - 1) * per_page: page * per_page]]

    # -- Freshdesk -------------------------------------------------------------------------------------

    def fd_folder(self, category_id: int, folder_id: int, visibility: int) -> None:
        with self.lock:
            if not any(c["id"] == category_id for c in self.categories):
                self.categories.append(
                    {
                        "id": category_id,
                        "name": f"Category {category_id}",
                        "description": "",
                        "visible_in_portals": [1],
                    }
                )
            folders = self.folders.setdefault(category_id, [])
            folders[:] = [f for f in folders if f["id"] != folder_id]
            folders.append(
                {
                    "id": folder_id,
                    "name": f"Folder {folder_id}",
                    "description": "",
                    "visibility": visibility,
                    "created_at": _iso(self.clock),
                    "updated_at": _iso(self.clock),
                }
            )
            self.fd.setdefault(folder_id, [])

    def fd_put(self, folder_id: int, article_id: int, *, title: str, html: str, status: int = 2) -> None:
        with self.lock:
            now = self.tick()
            rows = self.fd.setdefault(folder_id, [])
            rows[:] = [a for a in rows if a["id"] != article_id]
            rows.append(
                {
                    "id": article_id,
                    "type": 1,
                    "category_id": 1,
                    "folder_id": folder_id,
                    "title": title,
                    "description": html,
                    "description_text": re.sub(r"<[^>]+>", " ", html).strip(),
                    "status": status,
                    "agent_id": 7,
                    "thumbs_up": 0,
                    "thumbs_down": 0,
                    "hits": 0,
                    "tags": [],
                    "seo_data": {},
                    "created_at": _iso(now),
                    "updated_at": _iso(now),
                }
            )
            rows.sort(key=lambda a: a["id"])

    def fd_delete(self, folder_id: int, article_id: int) -> None:
        with self.lock:
            self.fd[folder_id] = [a for a in self.fd.get(folder_id, []) if a["id"] != article_id]

    def _fd_articles(self, folder_id: int, query: dict[str, str]) -> tuple[int, Any]:
        per_page, page = int(query.get("per_page", "30")), int(query.get("page", "1"))
        if not 1 <= per_page <= 100 or page < 1:
            return 400, {"description": "Validation failed", "errors": [{"field": "per_page",
                                                                         "message": "must be 1-100"}]}
        if folder_id not in self.fd:
            return 404, {"code": "not_found"}
        rows = self.fd[folder_id]
        return 200, rows[(page - 1) * per_page: page * per_page]
