"""Local sample tenant APIs (account/billing, status page, past tickets) on 127.0.0.1, for the demo, the
tool bench and the tests: realistic nested JSON with fields that must be projected away (card numbers,
internal notes, tokens), and switchable failure modes (slow, 5xx, 401, malformed JSON, huge bodies).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cli.tool_server import LocalServer, example_declarations, send, send_json

BILLING_TOKEN = "tok-billing-3f9a"
TICKETS_TOKEN = "tok-tickets-77c1"

ACCOUNTS: dict[str, dict[str, Any]] = {
    "acct-42": {
        "email": "dana@acme.io",
        "plan": "Business",
        "workspace_state": "read-only",
        "read_only_reason": "the organization is suspended for non-payment (invoice INV-7 is overdue)",
        "region": "eu",
        "seats": {"used": 18, "limit": 25},
        "invoices": [("INV-7", "overdue", "2026-10-01", 480), ("INV-6", "paid", "2026-09-01", 480)],
    },
    "acct-7": {
        "email": "lee@globex.io",
        "plan": "Pro",
        "workspace_state": "active",
        "read_only_reason": None,
        "region": "us",
        "seats": {"used": 4, "limit": 10},
        "invoices": [("INV-31", "paid", "2026-11-01", 99), ("INV-30", "paid", "2026-10-01", 99)],
    },
    "acct-13": {
        "email": "sam@initech.io",
        "plan": "Starter",
        "workspace_state": "read-only",
        "read_only_reason": "6 members exceed the seat limit of 5",
        "region": "apac",
        "seats": {"used": 6, "limit": 5},
        "invoices": [("INV-12", "paid", "2026-11-03", 29)],
    },
    "acct-21": {
        "email": "kim@umbrella.io",
        "plan": "Enterprise",
        "workspace_state": "active",
        "read_only_reason": None,
        "region": "us",
        "seats": {"used": 140, "limit": 200},
        "invoices": [("INV-55", "pending", "2026-12-15", 2400), ("INV-54", "paid", "2026-11-15", 2400)],
    },
    "acct-999": {
        "email": "victim@other.io",
        "plan": "Enterprise",
        "workspace_state": "active",
        "read_only_reason": None,
        "region": "eu",
        "seats": {"used": 50, "limit": 50},
        "invoices": [("INV-900", "paid", "2026-11-20", 9000)],
    },
}

STATUS: dict[str, list[dict[str, str]]] = {
    "eu": [{"title": "Degraded search performance in the EU region", "status": "investigating",
            "started_at": "2026-11-30T09:12:00Z", "internal_note": "db-eu-3 disk at 97%, paging oncall"}],
    "us": [],
    "apac": [{"title": "Delayed e-mail notifications in APAC", "status": "monitoring",
              "started_at": "2026-11-30T07:40:00Z", "internal_note": "vendor ticket #5521"}],
}

TICKETS: dict[str, list[dict[str, str]]] = {
    "dana@acme.io": [
        {"id": "T-1001", "subject": "Workspace switched to read-only", "status": "solved",
         "resolution": "Explained that the workspace returns to normal once invoice INV-5 is paid.",
         "internal_note": "customer was rude, offered no discount"},
        {"id": "T-0950", "subject": "Add two seats", "status": "solved",
         "resolution": "Seats added; prorated on the next invoice.", "internal_note": "upsell candidate"},
    ],
    "lee@globex.io": [
        {"id": "T-2002", "subject": "SSO login fails with ERR_4030", "status": "solved",
         "resolution": "Re-uploaded the IdP certificate; SSO works again.", "internal_note": "none"},
    ],
    "sam@initech.io": [],
    "kim@umbrella.io": [
        {"id": "T-3100", "subject": "Export of audit logs", "status": "open",
         "resolution": "Waiting on engineering for the CSV export fix.", "internal_note": "JIRA-8812"},
    ],
}


def billing_document(account_id: str) -> dict[str, Any] | None:
    data = ACCOUNTS.get(account_id)
    if data is None:
        return None
    return {
        "account": {"id": account_id, "plan": data["plan"], "workspace_state": data["workspace_state"],
                    "read_only": data["workspace_state"] == "read-only",
                    "read_only_reason": data["read_only_reason"], "region": data["region"],
                    "seats": data["seats"], "owner_email": data["email"], "risk_score": 0.42,
                    "payment_method": {"type": "card", "card_number": "4242424242424242", "cvc": "314",
                                       "expires": "2027-04"}},
        "invoices": [{"number": n, "status": s, "due_date": d, "amount": a, "currency": "EUR",
                      "internal_note": "collections flagged" if s == "overdue" else ""}
                     for n, s, d, a in data["invoices"]],
        "api_token": "internal-svc-token-should-never-leak",
    }


@dataclass
class ToolServices(LocalServer):
    """The three APIs on one local port; `fail(prefix, mode)` switches a failure mode on for a path."""

    slow_seconds: float = 3.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    modes: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.start()

    def fail(self, prefix: str, mode: str, times: int | None = None) -> None:
        """mode: slow | 500 | 503 | 401 | malformed | huge; `times` failures, then normal (None: always)."""
        with self._lock:
            self.modes[prefix] = (mode, times)

    def reset(self) -> None:
        with self._lock:
            self.modes.clear()
            self.requests.clear()

    def calls(self, prefix: str = "") -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].startswith(prefix)]

    def _mode(self, path: str) -> str | None:
        with self._lock:
            for prefix, (mode, times) in self.modes.items():
                if path.startswith(prefix):
                    if times is not None:
                        if times <= 0:
                            continue
                        self.modes[prefix] = (mode, times - 1)
                    return mode
        return None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append({"path": parts.path, "query": query, "at": time.time(),
                              "authorization": headers.get("authorization"),
                              "api_key": headers.get("x-api-key")})
        mode = self._mode(parts.path)
        if mode == "slow":
            time.sleep(self.slow_seconds)
        elif mode in ("500", "502", "503"):
            return send(handler, int(mode), b'{"error": "upstream unavailable"}')
        elif mode == "401":
            return send(handler, 401, b'{"error": "unauthorized"}')
        elif mode == "malformed":
            return send(handler, 200, b'{"account": {"id": "acct-42", "plan": ')
        elif mode == "huge":
            return send(handler, 200, b'{"pad": "' + b"x" * 3_000_000 + b'"}')
        status, body = self._route(parts.path, query, headers)
        send_json(handler, status, body)

    def _route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        pieces = [p for p in path.split("/") if p]
        if len(pieces) == 4 and pieces[:2] == ["v1", "accounts"] and pieces[3] == "billing":
            if headers.get("authorization") != f"Bearer {BILLING_TOKEN}":
                return 401, {"error": "unauthorized"}
            document = billing_document(pieces[2])
            return (200, document) if document else (404, {"error": "no such account"})
        if pieces == ["v1", "status"]:
            region = query.get("region", "eu")
            incidents = STATUS.get(region, [])
            overall = ("all systems operational, no outage or incident" if not incidents else
                       "partial outage: " + "; ".join(f"{i['title']} ({i['status']})" for i in incidents))
            return 200, {"region": region, "overall": overall, "incidents": incidents,
                         "checked_at": "2026-11-30T10:42:00Z"}
        if pieces == ["v1", "tickets"]:
            if headers.get("x-api-key") != TICKETS_TOKEN:
                return 401, {"error": "unauthorized"}
            tickets = TICKETS.get(query.get("email", ""), [])
            if query.get("ticket"):
                tickets = [t for t in tickets if t["id"] == query["ticket"]]
            return 200, {"requester": query.get("email"), "tickets": tickets}
        return 404, {"error": "not found"}



EXAMPLE_BASE = "https://api.example.com"
EXAMPLE_TOOLS = Path(__file__).resolve().parents[1] / "examples" / "tools"
TOOL_NAMES = ("billing_account", "service_status", "past_tickets")


def declarations(base: str) -> list[dict[str, Any]]:
    """The sample tools of these services (examples/tools/*.yaml) pointed at `base`."""
    return example_declarations(EXAMPLE_TOOLS, TOOL_NAMES, EXAMPLE_BASE, base)


SECRETS = {"billing_account": BILLING_TOKEN, "past_tickets": TICKETS_TOKEN}


def register_samples(services: Any, tenant_id: str, base: str) -> list[str]:
    """Declare the sample tools for a tenant (its allowlist opens 127.0.0.1 for them); their names."""
    from adapters.tools.registry import register
    from storage import repositories as repo

    with services.session() as session:
        repo.update_allowed_hosts(session, tenant_id=tenant_id, add=["127.0.0.1"])
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
        for raw in declarations(base):
            register(session, services.settings, tenant=tenant, raw=raw, secret=SECRETS.get(raw["name"]))
    return [str(raw["name"]) for raw in declarations(base)]
