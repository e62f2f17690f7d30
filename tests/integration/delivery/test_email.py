"""The e-mail channel against real aiosmtpd servers: plain, STARTTLS with a throwaway certificate,
implicit TLS, AUTH, a 4xx-then-accept server and a 5xx server — through `attempt_delivery`."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from bootstrap import Services
from storage import repositories as repo
from tasks.delivery_step import attempt_delivery
from tests.integration.delivery.helpers import (
    add_channel,
    attempts,
    delivery,
    finished,
    make_services,
    new_tenant,
)
from tests.support.smtp import SmtpServer, make_certificate, server_context


@pytest.fixture()
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    return make_certificate(tmp_path)


@pytest.fixture()
def services_settings(certificate: tuple[Path, Path]) -> dict[str, Any]:
    return {"smtp_ca_file": certificate[0], "public_url": "https://sleuth.acme.test"}


def body_of(message: EmailMessage, subtype: str) -> str:
    """The text of the message's `subtype` ("plain", "html") body part."""
    part = message.get_body((subtype,))
    assert part is not None, f"no text/{subtype} part"
    return str(part.get_content())


def _email_delivery(services: Services, server: SmtpServer, **channel: object) -> tuple[str, str]:
    tenant = new_tenant(services)
    add_channel(services, tenant, name="mail", type="smtp", host="127.0.0.1", port=server.port,
                **{"from": "sleuth@acme.test"}, **channel)
    inv_id, [delivery_id] = finished(
        services,
        tenant,
        {
            "type": "email",
            "channel": "mail",
            "to": ["agent@acme.test"],
            "reply_to_message_id": "<t-77@helpdesk>",
        },
    )
    return inv_id, delivery_id


def test_plain_smtp_sends_one_multipart_mail_with_footnotes(services: Services) -> None:
    server = SmtpServer()
    try:
        inv_id, delivery_id = _email_delivery(services, server)
        outcome = attempt_delivery(services, delivery_id)
        assert (outcome.status, outcome.attempt) == ("delivered", 1)
        [mail] = server.received
    finally:
        server.close()
    assert mail.mail_from == "sleuth@acme.test" and mail.rcpt_tos == ["agent@acme.test"]
    msg = mail.message
    assert msg["Message-ID"] == f"<{delivery_id}@acme.test>"
    assert msg["In-Reply-To"] == "<t-77@helpdesk>" == msg["References"]
    assert msg["Subject"].startswith("Re: [Sleuth] Answer: Which region keeps our data in Germany?")
    assert msg.get_content_type() == "multipart/alternative"
    text = body_of(msg, "plain")
    html = body_of(msg, "html")
    assert (
        "Frankfurt region [1]" in text and "[1] Frankfurt region" in text and "[2] Plans and pricing" in text
    )
    assert f"Trace: https://sleuth.acme.test/trace/{inv_id}" in text
    assert f"Sleuth ref {delivery_id}" in text and f"Sleuth ref {delivery_id}" in html
    assert "<li value=\"1\">Frankfurt region</li>" in html
    [logged] = attempts(services, delivery_id)
    assert logged.status_code == 250 and "queued as SLEUTHTEST" in (logged.detail or "")


def test_starttls_with_auth(services: Services, certificate: tuple[Path, Path]) -> None:
    server = SmtpServer(starttls=server_context(*certificate), login=("sleuth", "s3cret"))
    try:
        _, delivery_id = _email_delivery(
            services, server, starttls=True, username="sleuth", password="s3cret"
        )
        assert attempt_delivery(services, delivery_id).status == "delivered"
        assert len(server.received) == 1
    finally:
        server.close()


def test_implicit_tls(services: Services, certificate: tuple[Path, Path]) -> None:
    server = SmtpServer(implicit_tls=server_context(*certificate))
    try:
        _, delivery_id = _email_delivery(services, server, ssl=True)
        assert attempt_delivery(services, delivery_id).status == "delivered"
        assert len(server.received) == 1
    finally:
        server.close()


def test_wrong_password_is_dead_with_the_servers_reason(
    services: Services, certificate: tuple[Path, Path]
) -> None:
    server = SmtpServer(starttls=server_context(*certificate), login=("sleuth", "s3cret"))
    try:
        _, delivery_id = _email_delivery(services, server, starttls=True, username="sleuth", password="wrong")
        assert attempt_delivery(services, delivery_id).status == "dead"
        assert "username/password" in (delivery(services, delivery_id).last_error or "")
        assert server.received == []
    finally:
        server.close()


def test_untrusted_certificate_is_refused(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str,
                                          certificate: tuple[Path, Path]) -> None:
    services = make_services(tmp_path, db_url, redis_url, redis_prefix)  # no smtp_ca_file: cert not trusted
    server = SmtpServer(starttls=server_context(*certificate))
    try:
        _, delivery_id = _email_delivery(services, server, starttls=True)
        assert attempt_delivery(services, delivery_id).status == "dead"
        assert "TLS" in (delivery(services, delivery_id).last_error or "")
        assert server.received == []
    finally:
        server.close()
        services.engine.dispose()


def test_4xx_then_accept_is_retried_with_the_same_message_id(services: Services) -> None:
    server = SmtpServer(replies=["451 4.3.0 Try again later"])
    try:
        _, delivery_id = _email_delivery(services, server)
        first = attempt_delivery(services, delivery_id)
        assert first.status == "pending" and first.retry_in is not None
        second = attempt_delivery(services, delivery_id)
        assert (second.status, second.attempt) == ("delivered", 2)
        assert server.handler.attempts == 2 and len(server.received) == 1
        assert server.received[0].message["Message-ID"] == f"<{delivery_id}@acme.test>"
    finally:
        server.close()
    assert [(a.status_code, a.error is None) for a in attempts(services, delivery_id)] == [
        (451, False),
        (250, True),
    ]


def test_5xx_is_dead_with_the_servers_reply(services: Services) -> None:
    server = SmtpServer(replies=["554 5.7.1 Message rejected as spam"])
    try:
        _, delivery_id = _email_delivery(services, server)
        outcome = attempt_delivery(services, delivery_id)
    finally:
        server.close()
    assert (outcome.status, outcome.attempt) == ("dead", 1)
    row = delivery(services, delivery_id)
    assert "554 5.7.1 Message rejected as spam" in (row.last_error or "")
    assert server.received == []


def test_server_down_is_transient(services: Services) -> None:
    server = SmtpServer()
    server.close()
    _, delivery_id = _email_delivery(services, server)
    outcome = attempt_delivery(services, delivery_id)
    assert outcome.status == "pending" and "could not reach" in (
        attempts(services, delivery_id)[0].error or ""
    )


def test_refusal_and_failure_are_worded_for_forwarding(services: Services) -> None:
    server = SmtpServer()
    try:
        tenant = new_tenant(services)
        add_channel(services, tenant, name="mail", type="smtp", host="127.0.0.1", port=server.port,
                    **{"from": "sleuth@acme.test"})
        callback = [{"type": "email", "channel": "mail", "to": ["a@acme.test"]},
                    {"type": "email", "channel": "mail", "to": ["b@acme.test"]}]
        _, refused_ids = finished(services, tenant, callback, status="refused")
        assert len(refused_ids) == 2  # a list of callbacks: one delivery each
        for delivery_id in refused_ids:
            assert attempt_delivery(services, delivery_id).status == "delivered"
        _, [failed_id] = finished(
            services, tenant, {"type": "email", "channel": "mail", "to": ["a@acme.test"]}, status="failed"
        )
        assert attempt_delivery(services, failed_id).status == "delivered"
    finally:
        server.close()
    subjects = [m.message["Subject"] for m in server.received]
    assert subjects.count("[Sleuth] No answer found: Which region keeps our data in Germany?") == 2
    assert "did not guess" in body_of(server.received[0].message, "plain")
    assert subjects[2].startswith("[Sleuth] Could not answer")
    assert sorted(m.rcpt_tos[0] for m in server.received[:2]) == ["a@acme.test", "b@acme.test"]


def test_loopback_smtp_host_is_refused_without_the_allowlist(services: Services) -> None:
    server = SmtpServer()
    try:
        tenant = new_tenant(services, allowed=[])
        add_channel(services, tenant, name="mail", type="smtp", host="127.0.0.1", port=server.port,
                    **{"from": "sleuth@acme.test"})
        _, [delivery_id] = finished(
            services, tenant, {"type": "email", "channel": "mail", "to": ["a@acme.test"]}
        )
        assert attempt_delivery(services, delivery_id).status == "dead"
        assert server.received == []
        with services.session() as session:
            assert "loopback" in (repo.get_delivery(session, delivery_id=delivery_id).last_error or "")
    finally:
        server.close()


def test_a_dead_mail_can_be_redelivered_with_the_same_message_id(services: Services) -> None:
    server = SmtpServer(replies=["550 5.1.1 Mailbox unavailable"])
    try:
        _, delivery_id = _email_delivery(services, server)
        assert attempt_delivery(services, delivery_id).status == "dead"
        with services.session() as session:
            repo.reset_delivery(session, delivery_id=delivery_id)  # POST /v1/deliveries/{id}/redeliver
        outcome = attempt_delivery(services, delivery_id)
        assert (outcome.status, outcome.attempt) == ("delivered", 2)
        assert [m.message["Message-ID"] for m in server.received] == [f"<{delivery_id}@acme.test>"]
    finally:
        server.close()
