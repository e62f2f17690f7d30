"""The outbound guard at send time, against real local receivers: loopback refused unless allowlisted,
the connection pinned to the checked address, names re-checked when they are sent to, no redirects."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from adapters.delivery.outbound import GuardedTransport, OutboundGuard, OutboundRefused
from adapters.delivery.webhook import WebhookDeliverer
from bootstrap import Services
from storage import repositories as repo
from tasks.delivery_step import attempt_delivery
from tests.support.http import Receiver


def _delivery(services: Services, url: str, allowed: list[str]) -> str:
    with services.session() as session:
        tenant, _ = repo.create_tenant(session, name=f"t-{uuid.uuid4().hex[:10]}", box=services.secret_box(),
                                       allowed_hosts=allowed)
        inv, _ = repo.create_investigation(
            session, tenant=tenant, question="q?", mode="agentic", callback={"type": "webhook", "url": url},
            budget={}, idempotency_key=None, deadline_seconds=60)
        repo.finish_investigation(
            session, investigation_id=inv.id, status="answered", stop_reason="sufficient", answer="A."
        )
        return repo.list_deliveries(session, investigation_id=inv.id)[0].id


@pytest.mark.parametrize("spelling", ["127.0.0.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]"])
def test_loopback_webhook_is_dead_without_the_allowlist(services: Services, spelling: str) -> None:
    receiver = Receiver()
    try:
        url = receiver.url.replace("127.0.0.1", spelling)
        delivery_id = _delivery(services, url, allowed=[])
        outcome = attempt_delivery(services, delivery_id)
        assert (outcome.status, outcome.attempt) == ("dead", 1)
        with services.session() as session:
            assert "loopback" in (repo.get_delivery(session, delivery_id=delivery_id).last_error or "")
        assert receiver.requests == []
        allowed = _delivery(services, url, allowed=["127.0.0.1"])
        if spelling.startswith("["):  # ::ffff:127.0.0.1 is not 127.0.0.1 to a socket here
            return
        assert attempt_delivery(services, allowed).status == "delivered"
        assert len(receiver.requests) == 1
    finally:
        receiver.close()


def test_connection_is_pinned_to_the_checked_address_and_host_header_kept() -> None:
    receiver = Receiver()
    calls: list[str] = []

    def dns(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.1"]

    port = receiver.server.server_port
    guard = OutboundGuard.for_hosts(["hooks.acme.test"], resolver=dns)
    deliverer = WebhookDeliverer(2.0, guard=guard)
    try:
        result = deliverer.deliver(delivery_id="msg_pin", target={"url": f"http://hooks.acme.test:{port}/h"},
                                   payload={"a": 1}, secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        assert result.status_code == 204
        assert calls == ["hooks.acme.test"]  # resolved once, by the guard; httpx connected to the address
        assert receiver.requests[0]["headers"]["host"] == f"hooks.acme.test:{port}"
    finally:
        deliverer.close()
        receiver.close()


def test_a_name_that_rebinds_to_loopback_after_intake_is_refused_when_sending() -> None:
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    guard = OutboundGuard(resolver=lambda host, port: next(answers))
    guard.check_url("http://rebind.acme.test/hook")  # intake: public
    deliverer = WebhookDeliverer(2.0, guard=guard)
    with pytest.raises(OutboundRefused, match="loopback"):
        deliverer.deliver(delivery_id="msg_r", target={"url": "http://rebind.acme.test/hook"}, payload={},
                          secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    deliverer.close()


def test_redirects_to_forbidden_addresses_are_refused() -> None:
    inner = Receiver()
    outer = Receiver(default=(302, {"Location": inner.url}))
    guard = OutboundGuard.for_hosts(["start.acme.test"], resolver=lambda host, port: ["127.0.0.1"])
    try:
        # The webhook never follows a redirect: a 3xx is an answer, and not a success.
        deliverer = WebhookDeliverer(2.0, guard=guard)
        start = f"http://start.acme.test:{outer.server.server_port}/h"
        with pytest.raises(Exception, match="302"):
            deliverer.deliver(delivery_id="msg_x", target={"url": start}, payload={},
                              secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        deliverer.close()
        # A client that does follow redirects still cannot be led to a forbidden address.
        with (httpx.Client(transport=GuardedTransport(guard), follow_redirects=True) as client,
              pytest.raises(OutboundRefused, match="loopback")):
            client.post(start, content=b"{}")
        assert inner.requests == []
    finally:
        inner.close()
        outer.close()


def test_https_is_pinned_to_the_address_and_verified_against_the_name(tmp_path: Path) -> None:
    """TLS to a pinned address still checks the certificate against the host name (SNI), not the address."""
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.support.smtp import make_certificate

    cert, key = make_certificate(tmp_path, names=("hooks.acme.test",), with_loopback_ip=False)
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append(self.headers.get("host", ""))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port
    trust = ssl.create_default_context(cafile=str(cert))
    try:
        guard = OutboundGuard.for_hosts(["hooks.acme.test"], resolver=lambda host, p: ["127.0.0.1"])
        deliverer = WebhookDeliverer(3.0, guard=guard, transport=httpx.HTTPTransport(verify=trust))
        result = deliverer.deliver(delivery_id="msg_tls", target={"url": f"https://hooks.acme.test:{port}/h"},
                                   payload={}, secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        deliverer.close()
        assert result.status_code == 204 and seen == [f"hooks.acme.test:{port}"]
        # The same address under a name the certificate does not carry fails verification.
        other = OutboundGuard.for_hosts(["other.acme.test"], resolver=lambda host, p: ["127.0.0.1"])
        wrong = WebhookDeliverer(3.0, guard=other, transport=httpx.HTTPTransport(verify=trust))
        with pytest.raises(Exception, match="(?i)certificate|ssl|tls|could not reach"):
            wrong.deliver(delivery_id="msg_tls2", target={"url": f"https://other.acme.test:{port}/h"},
                          payload={}, secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        wrong.close()
        assert len(seen) == 1
    finally:
        server.shutdown()
        server.server_close()
