"""From `POST /v1/investigations` over real HTTP to a signed webhook received by a local HTTP server,
through a real API process, a real Celery worker process, real Redis and a real database."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.api_process import api_process
from tests.support.http import Receiver
from tests.support.stack import Stack, build_stack, with_new_tenant
from tests.support.wait import wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str, module_redis_prefix: str,
           module_db_url: str) -> Iterator[tuple[Stack, str]]:
    """A real `sleuth api` process and one worker for the module, per database."""
    stack = build_stack(tmp_path_factory.mktemp("live") / "home", redis_url, module_redis_prefix,
                        database_url=module_db_url)
    stack.start_worker()  # boots while the API does
    try:
        with api_process(stack.env()) as base:
            stack.wait_ready()
            yield stack, base
    finally:
        stack.stop_workers()


@pytest.fixture()
def live(server: tuple[Stack, str]) -> tuple[Stack, str]:
    """The module's API and worker, seen as a tenant of the test's own."""
    stack, base = server
    return with_new_tenant(stack), base


def _wait_terminal(base: str, key: str, inv_id: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view: dict[str, Any] = httpx.get(f"{base}/v1/investigations/{inv_id}",
                                         headers={"Authorization": f"Bearer {key}"}).json()
        if view["status"] in ("answered", "refused", "failed"):
            return view
        time.sleep(0.2)
    raise AssertionError(f"{inv_id} not terminal")


def test_post_to_signed_webhook_exactly_once(live: tuple[Stack, str]) -> None:
    from adapters.delivery.webhook import verify

    stack, base = live
    receiver = Receiver()
    auth = {"Authorization": f"Bearer {stack.api_key}", "Idempotency-Key": "ticket-1234"}
    body = {"question": "Which region keeps all customer data inside Germany, and which plan do I need?",
            "callback": {"type": "webhook", "url": receiver.url}}
    first = httpx.post(f"{base}/v1/investigations", json=body, headers=auth)
    assert first.status_code == 202, first.text
    inv_id = first.json()["id"]
    again = httpx.post(f"{base}/v1/investigations", json=body, headers=auth)
    assert again.json()["id"] == inv_id  # a retried POST never creates a second investigation
    view = _wait_terminal(base, stack.api_key, inv_id)
    assert view["status"] == "answered", view
    assert wait_until(lambda: len(receiver.requests) >= 1, timeout=30)
    time.sleep(1.0)
    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    verify(stack.webhook_secret, request["headers"], request["body"])
    payload = json.loads(request["body"])
    assert payload["id"] == inv_id and payload["status"] == "answered"
    assert payload["citations"] and payload["answer"]
    trace = httpx.get(f"{base}/v1/investigations/{inv_id}/trace",
                      headers={"Authorization": f"Bearer {stack.api_key}"}).json()
    kinds = [e["kind"] for e in trace["events"]]
    assert kinds[0] == "route" and "delivery" in kinds
    receiver.close()


def test_other_tenant_gets_404_and_bad_input_writes_nothing(live: tuple[Stack, str]) -> None:
    from storage import repositories as repo

    stack, base = live
    with stack.services.session() as session:
        _, other_key = repo.create_tenant(
            session, name=stack.tenant_name + "-other", box=stack.services.secret_box()
        )
    auth = {"Authorization": f"Bearer {stack.api_key}"}
    created = httpx.post(f"{base}/v1/investigations", json={"question": "What is ERR_4021?"}, headers=auth)
    inv_id = created.json()["id"]
    stolen = httpx.get(f"{base}/v1/investigations/{inv_id}", headers={"Authorization": f"Bearer {other_key}"})
    assert stolen.status_code == 404
    bad = httpx.post(f"{base}/v1/investigations", json={"question": "   ", "mode": "agentic"}, headers=auth)
    assert bad.status_code == 422 and "question" in bad.text
    huge = httpx.post(f"{base}/v1/investigations", json={"question": "x" * 9000}, headers=auth)
    assert huge.status_code == 413
    with stack.services.session() as session:
        from sqlmodel import select

        from storage.models import Investigation

        rows = session.exec(select(Investigation).where(Investigation.tenant_id == stack.tenant_id)).all()
    assert len(rows) == 1
    _wait_terminal(base, stack.api_key, inv_id)
