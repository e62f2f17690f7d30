"""The HTTP executor against real local APIs: projection, timeouts, retries on 5xx, 401, malformed JSON,
huge bodies, and the outbound guard (loopback refused unless the tenant allowlists it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from adapters.tools.http import HttpToolExecutor
from adapters.tools.outbound import guard_for, guarded_transport
from cli.tool_services import BILLING_TOKEN, TICKETS_TOKEN, ToolServices, declarations
from investigation.tools.declaration import ToolDeclaration, parse_declaration


@pytest.fixture(scope="module")
def services() -> Iterator[ToolServices]:
    svc = ToolServices(slow_seconds=1.5)
    yield svc
    svc.close()


@pytest.fixture(autouse=True)
def _clean(services: ToolServices) -> None:
    services.reset()


def tool(services: ToolServices, name: str, **overrides: Any) -> ToolDeclaration:
    raw = next(d for d in declarations(services.base) if d["name"] == name)
    return parse_declaration({**raw, **overrides})


def executor(sleeps: list[float] | None = None) -> HttpToolExecutor:
    transport = guarded_transport(guard_for(["127.0.0.1"]))
    return HttpToolExecutor(
        transport=transport, sleep=(sleeps.append if sleeps is not None else lambda _: None)
    )


def test_a_call_returns_only_projected_fields(services: ToolServices) -> None:
    result = executor().call(
        tool(services, "billing_account"), {"account_id": "acct-42"}, secret=BILLING_TOKEN
    )
    assert result.ok and result.attempts == 1
    doc = result.document or {}
    assert doc["account"]["workspace_state"] == "read-only"
    assert doc["invoices"][0] == {"number": "INV-7", "status": "overdue", "due_date": "2026-10-01",
                                  "amount": 480, "currency": "EUR", "internal_note": "collections flagged"}
    flat = str(doc)
    assert "4242424242424242" not in flat and "internal-svc-token" not in flat and "owner_email" not in flat
    assert services.calls()[0]["authorization"] == f"Bearer {BILLING_TOKEN}"


def test_header_auth_and_query_parameters(services: ToolServices) -> None:
    result = executor().call(tool(services, "past_tickets"), {"email": "lee@globex.io", "ticket": "T-2002"},
                             secret=TICKETS_TOKEN)
    assert result.ok and (result.document or {})["tickets"][0]["id"] == "T-2002"
    assert services.calls()[0]["query"] == {"email": "lee@globex.io", "ticket": "T-2002"}
    assert services.calls()[0]["api_key"] == TICKETS_TOKEN


def test_5xx_is_retried_with_backoff_then_succeeds(services: ToolServices) -> None:
    services.fail("/v1/accounts", "503", times=2)
    sleeps: list[float] = []
    result = executor(sleeps).call(tool(services, "billing_account"), {"account_id": "acct-7"},
                                   secret=BILLING_TOKEN)
    assert result.ok and result.attempts == 3 and sleeps == [0.2, 0.4]


def test_5xx_beyond_the_retries_is_an_error(services: ToolServices) -> None:
    services.fail("/v1/accounts", "500")
    result = executor().call(
        tool(services, "billing_account"), {"account_id": "acct-7"}, secret=BILLING_TOKEN
    )
    assert not result.ok and result.error == "HTTP 500" and result.attempts == 3 and result.retryable
    assert len(services.calls()) == 3


def test_a_slow_api_times_out(services: ToolServices) -> None:
    services.fail("/v1/status", "slow")
    result = executor().call(tool(services, "service_status", timeout=0.3, retries=0), {"region": "eu"},
                             secret=None)
    assert not result.ok and result.error == "timed out after 0.3s" and result.attempts == 1


def test_401_is_not_retried(services: ToolServices) -> None:
    result = executor().call(tool(services, "billing_account"), {"account_id": "acct-7"}, secret="wrong")
    assert result.error == "the tool's credentials were refused (HTTP 401)" and result.attempts == 1
    assert not result.retryable


def test_malformed_json_and_huge_bodies_are_errors(services: ToolServices) -> None:
    services.fail("/v1/accounts", "malformed")
    bad = executor().call(tool(services, "billing_account"), {"account_id": "acct-7"}, secret=BILLING_TOKEN)
    assert bad.error == "the response is not valid JSON"
    services.fail("/v1/accounts", "huge")
    huge = executor().call(tool(services, "billing_account"), {"account_id": "acct-7"}, secret=BILLING_TOKEN)
    assert huge.error == "response over 1000000 bytes"


def test_a_404_is_an_error_without_retry(services: ToolServices) -> None:
    result = executor().call(
        tool(services, "billing_account"), {"account_id": "acct-1"}, secret=BILLING_TOKEN
    )
    assert result.error == "HTTP 404" and result.attempts == 1


def test_loopback_is_refused_without_the_allowlist(services: ToolServices) -> None:
    guarded = HttpToolExecutor(transport=guarded_transport(guard_for([])))
    result = guarded.call(tool(services, "service_status"), {"region": "eu"}, secret=None)
    assert result.error is not None and result.error.startswith("refused: 127.0.0.1")
    assert services.calls() == []
