"""Declarations shared by the tool tests (the shapes of the fake account/billing, status, tickets APIs)."""

from __future__ import annotations

from typing import Any

BASE = "https://api.acme.test"


def billing(base: str = BASE, **overrides: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "billing_account",
        "description": "Billing state of the requester's account: plan, invoices, overdue balance, and "
                       "whether the workspace is read-only because an invoice is unpaid.",
        "method": "GET",
        "url": base + "/v1/accounts/{account_id}/billing",
        "params": {"account_id": {"schema": {"type": "string", "pattern": "^acct-[0-9]{2,6}$"},
                                  "source": "context.account_id"}},
        "auth": {"type": "bearer"},
        "timeout": 2, "retries": 1, "cache_ttl": 60,
        "projection": ["account.id", "account.plan", "account.workspace_state", "invoices[].number",
                       "invoices[].status", "invoices[].due_date", "invoices[].amount"],
        "internal_fields": ["account.risk_score"],
        "title": "Billing account {account.id}",
        "gap_message": "I could not reach the billing system, so I cannot confirm your account's state.",
        "policy": {"routes": ["lookup", "multi_part", "multi_hop"], "audiences": ["agent", "customer"],
                   "requires_requester": True, "subject": "requester", "identifiers": ["account_id"]},
    }
    decl.update(overrides)
    return decl


def status(base: str = BASE, **overrides: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "service_status",
        "description": "Current incidents and outages on the status page by region: is the service down, "
                       "degraded or affected by an outage.",
        "url": base + "/v1/status?region={region}",
        "params": {"region": {"schema": {"type": "string", "enum": ["eu", "us", "apac"]},
                              "source": "context.attributes.region"}},
        "projection": ["region", "incidents[].title", "incidents[].status", "incidents[].started_at"],
        "title": "Status page ({region})",
        "policy": {"audiences": ["agent", "customer"], "requires_requester": False, "subject": "any"},
    }
    decl.update(overrides)
    return decl


def tickets(base: str = BASE, **overrides: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "past_tickets",
        "description": "The requester's past support tickets and our earlier replies: did we already answer "
                       "this, previous ticket about the same problem.",
        "url": base + "/v1/tickets?email={email}",
        "params": {"email": {"schema": {"type": "string", "format": "email"},
                             "source": "context.requester.email"},
                   "ticket": {"schema": {"type": "string", "pattern": "^T-[0-9]{3,8}$"}, "source": "question",
                              "required": False}},
        "projection": ["tickets[].id", "tickets[].subject", "tickets[].resolution"],
        "internal_fields": ["tickets[].internal_note"],
        "title": "Past tickets of {email}",
        "owner": {"field": "requester", "equals": "context.requester.email"},
        "policy": {"audiences": ["agent"], "requires_requester": True, "subject": "requester"},
    }
    decl.update(overrides)
    return decl


CONTEXT = {"requester": {"email": "dana@acme.io", "name": "Dana"}, "account_id": "acct-42",
           "ticket_id": "T-1001", "attributes": {"region": "eu"}}
