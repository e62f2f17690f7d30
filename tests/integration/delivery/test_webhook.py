"""Webhook delivery against a REAL local HTTP receiver: signatures, retries, dead-lettering, exactly once."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.delivery.webhook import InvalidSignature, WebhookDeliverer, verify
from bootstrap import Services
from investigation.errors import PermanentError, ReceiverRejected, ReceiverUnavailable, TransientError
from investigation.ports import Delivered
from storage import repositories as repo
from tasks.delivery_step import attempt_delivery
from tests.integration.delivery.helpers import make_services
from tests.support.http import Receiver, free_port


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def answered_delivery(services: Services, url: str) -> tuple[str, str, str]:
    """(delivery id, investigation id, tenant webhook secret) of a finished investigation."""
    with services.session() as session:
        tenant, _ = repo.create_tenant(session, name=f"t-{uuid.uuid4().hex[:10]}", box=services.secret_box(),
                                       allowed_hosts=["127.0.0.1"])
        inv, _ = repo.create_investigation(
            session, tenant=tenant, question="Which region keeps data in Germany?", mode="agentic",
            callback={"type": "webhook", "url": url}, budget={}, idempotency_key=None, deadline_seconds=60)
        repo.finish_investigation(
            session,
            investigation_id=inv.id,
            status="answered",
            stop_reason="sufficient",
            answer="Frankfurt [1].",
            citations=[{"marker": 1, "evidence_id": "e1", "source_id": "frankfurt", "title": "Frankfurt"}],
        )
        delivery = repo.list_deliveries(session, investigation_id=inv.id)[0]
        return delivery.id, inv.id, repo.open_webhook_secret(tenant, services.secret_box())


def attempts(services: Services, delivery_id: str) -> list[Any]:
    with services.session() as session:
        return repo.list_attempts(session, delivery_id=delivery_id)


def status_of(services: Services, delivery_id: str) -> str:
    with services.session() as session:
        return repo.get_delivery(session, delivery_id=delivery_id).status


def test_delivers_signed_payload_once(services: Services, receiver: Receiver) -> None:
    delivery_id, inv_id, secret = answered_delivery(services, receiver.url)
    outcome = attempt_delivery(services, delivery_id)
    assert (outcome.status, outcome.retry_in, outcome.attempt) == ("delivered", None, 1)
    [request] = receiver.requests
    headers = request["headers"]
    verify(secret, headers, request["body"])
    assert headers["webhook-id"] == delivery_id == headers["idempotency-key"]
    assert headers["content-type"] == "application/json"
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
    payload = json.loads(request["body"])
    assert (
        payload["id"] == inv_id and payload["status"] == "answered" and payload["answer"] == "Frankfurt [1]."
    )
    with pytest.raises(InvalidSignature):
        verify(secret, headers, request["body"] + b" ")
    with pytest.raises(InvalidSignature):
        verify(secret, headers, request["body"], now=time.time() + 3600)
    assert status_of(services, delivery_id) == "delivered"
    [logged] = attempts(services, delivery_id)
    assert logged.status_code == 204 and logged.error is None and logged.duration_ms > 0
    with services.session() as session:
        events = repo.list_events(session, investigation_id=inv_id)
    assert [(e.kind, e.data["outcome"], e.data["attempt"]) for e in events] == [("delivery", "delivered", 1)]


def test_already_delivered_is_skipped_without_a_second_post(services: Services, receiver: Receiver) -> None:
    delivery_id, _, _ = answered_delivery(services, receiver.url)
    assert attempt_delivery(services, delivery_id).status == "delivered"
    again = attempt_delivery(services, delivery_id)  # the task redelivered after the worker died
    assert (again.status, again.retry_in, again.attempt) == ("skipped", None, 1)
    assert len(receiver.requests) == 1
    assert len(attempts(services, delivery_id)) == 1


def test_server_errors_retry_with_the_same_id_then_dead(services: Services) -> None:
    receiver = Receiver(default=(500, {}))
    try:
        delivery_id, _, secret = answered_delivery(services, receiver.url)
        outcomes = [attempt_delivery(services, delivery_id) for _ in range(3)]
    finally:
        receiver.close()
    assert [o.status for o in outcomes] == ["pending", "pending", "dead"]
    assert [o.attempt for o in outcomes] == [1, 2, 3]
    assert all(o.retry_in is not None and 0 <= o.retry_in <= 0.05 for o in outcomes[:2])
    assert outcomes[2].retry_in is None
    assert {r["headers"]["webhook-id"] for r in receiver.requests} == {delivery_id}
    assert {r["headers"]["idempotency-key"] for r in receiver.requests} == {delivery_id}
    for request in receiver.requests:  # every attempt freshly signed, and valid
        verify(secret, request["headers"], request["body"])
    logged = attempts(services, delivery_id)
    assert [(a.number, a.status_code) for a in logged] == [(1, 500), (2, 500), (3, 500)]
    assert all(a.error and "500" in a.error for a in logged)
    assert status_of(services, delivery_id) == "dead"
    assert attempt_delivery(services, delivery_id).status == "skipped"  # dead stays dead until redelivered
    assert len(receiver.requests) == 3


def test_429_retry_after_is_honoured(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str) -> None:
    services = make_services(tmp_path, db_url, redis_url, redis_prefix, webhook_backoff_max=5.0)
    receiver = Receiver()
    receiver.script = [(429, {"Retry-After": "2"})]
    try:
        delivery_id, _, _ = answered_delivery(services, receiver.url)
        first = attempt_delivery(services, delivery_id)
        assert first.status == "pending" and first.retry_in == 2.0
        second = attempt_delivery(services, delivery_id)
        assert second.status == "delivered" and second.attempt == 2
        assert [a.status_code for a in attempts(services, delivery_id)] == [429, 204]
    finally:
        receiver.close()
        services.engine.dispose()


def test_receiver_down_is_transient(services: Services) -> None:
    delivery_id, _, _ = answered_delivery(services, f"http://127.0.0.1:{free_port()}/hook")
    outcome = attempt_delivery(services, delivery_id)
    assert outcome.status == "pending" and outcome.retry_in is not None
    [logged] = attempts(services, delivery_id)
    assert logged.status_code is None and logged.error and "could not reach" in logged.error
    assert status_of(services, delivery_id) == "pending"


class Scripted:
    """A deliverer that answers from a script (a `Delivered` or an error per attempt) and notes `resume`."""

    channel = "webhook"

    def __init__(self, *script: Delivered | Exception) -> None:
        self.script, self.resumed = list(script), list[bool]()

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        self.resumed.append(resume)
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    def close(self) -> None:
        pass


def test_the_attempt_log_takes_status_and_uncertainty_from_the_typed_errors(services: Services) -> None:
    delivery_id, _, _ = answered_delivery(services, "https://hooks.example.test/never-called")
    scripted = Scripted(ReceiverUnavailable("receiver answered 503", status_code=503, uncertain=True),
                        TransientError("a blip before any request"),
                        Delivered(202, "queued"))
    outcomes = [attempt_delivery(services, delivery_id, deliverers={"webhook": scripted}) for _ in range(3)]
    assert [o.status for o in outcomes] == ["pending", "pending", "delivered"]
    logged = attempts(services, delivery_id)
    assert [(a.status_code, a.uncertain) for a in logged] == [(503, True), (None, False), (202, False)]
    assert logged[-1].detail == "queued"
    assert scripted.resumed == [False, True, False]  # only the attempt after an uncertain one looks first

    rejected_id, _, _ = answered_delivery(services, "https://hooks.example.test/never-called")
    refusing = Scripted(ReceiverRejected("receiver answered 410 Gone", status_code=410))
    assert attempt_delivery(services, rejected_id, deliverers={"webhook": refusing}).status == "dead"
    assert [(a.status_code, a.uncertain) for a in attempts(services, rejected_id)] == [(410, False)]


@pytest.mark.parametrize("status", [400, 401, 404, 410])
def test_client_errors_are_dead_at_once(services: Services, status: int) -> None:
    receiver = Receiver(default=(status, {}))
    try:
        delivery_id, _, _ = answered_delivery(services, receiver.url)
        outcome = attempt_delivery(services, delivery_id)
    finally:
        receiver.close()
    assert (outcome.status, outcome.attempt) == ("dead", 1)
    assert len(receiver.requests) == 1
    assert [a.status_code for a in attempts(services, delivery_id)] == [status]


def test_redelivered_dead_delivery_continues_counting(services: Services) -> None:
    receiver = Receiver(default=(503, {}))
    try:
        delivery_id, _, _ = answered_delivery(services, receiver.url)
        while attempt_delivery(services, delivery_id).status == "pending":
            pass
        with services.session() as session:
            repo.reset_delivery(session, delivery_id=delivery_id)
        receiver.default = (200, {})
        outcome = attempt_delivery(services, delivery_id)
    finally:
        receiver.close()
    assert (outcome.status, outcome.attempt) == ("delivered", 4)
    assert {r["headers"]["webhook-id"] for r in receiver.requests} == {delivery_id}


def test_concurrent_copies_of_the_task_post_once(services: Services) -> None:
    receiver = Receiver(delay=0.5)
    try:
        delivery_id, _, _ = answered_delivery(services, receiver.url)
        results: list[Any] = []
        threads = [threading.Thread(target=lambda: results.append(attempt_delivery(services, delivery_id)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        receiver.close()
    assert sorted(o.status for o in results) == ["delivered", "pending"]
    assert len(receiver.requests) == 1
    busy = next(o for o in results if o.status == "pending")
    assert busy.retry_in is not None and busy.retry_in > 0


def test_timeout_is_transient(services: Services) -> None:
    receiver = Receiver(delay=1.5)
    try:
        deliverer = WebhookDeliverer(0.3)
        with pytest.raises(TransientError, match="timed out"):
            deliverer.deliver(delivery_id="msg_1", target={"url": receiver.url}, payload={"a": 1},
                              secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        deliverer.close()
    finally:
        receiver.close()


def test_missing_url_is_permanent() -> None:
    with pytest.raises(PermanentError):
        WebhookDeliverer(1.0).deliver(delivery_id="msg_1", target={}, payload={}, secret="whsec_AAAA")
