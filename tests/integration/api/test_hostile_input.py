"""Hostile input against a real HTTP server (uvicorn on 127.0.0.1, the app of `create_app`): short bodies,
bodies that never come, headers no parser expected, JSON nested past the parser, event ids past 64 bits,
secrets over their size limit. Every one is a 4xx and none logs an ERROR."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from api.app import create_app
from app.channels import add_channel
from app.hooks import zendesk_signature
from bootstrap import Services
from storage import repositories as repo
from tests.integration.api.conftest import Recorder, make_settings, new_tenant
from tests.support.http import free_port
from tests.support.wait import wait_until

SIGNING, INBOUND = "zd-signing-secret", "fd-inbound-secret"
BODY_TIMEOUT = 1.0  # seconds the server waits for a body here (the default is 30)
# 60,000 bytes: under the hooks' size limit, past any JSON parser's depth
DEEP = b"[" * 30_000 + b"]" * 30_000


@dataclass
class Server:
    base: str
    port: int
    key: str
    services: Services
    zendesk: str
    freshdesk: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@pytest.fixture()
def server(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str,
           caplog: pytest.LogCaptureFixture) -> Iterator[Server]:
    caplog.set_level(logging.INFO)
    services = Services(make_settings(tmp_path / "home", db_url, redis_url, redis_prefix,
                                      request_body_timeout=BODY_TIMEOUT))
    tenant_id, key = new_tenant(services, allowed_hosts=["127.0.0.1"])
    with services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
    zendesk = add_channel(services, tenant=tenant, data={
        "name": "zd", "type": "zendesk", "subdomain": "acme", "email": "bot@acme.test", "token": "t",
        "signing_secret": SIGNING, "base_url": "http://127.0.0.1:9"})["id"]
    freshdesk = add_channel(services, tenant=tenant, data={
        "name": "fd", "type": "freshdesk", "domain": "acme", "api_key": "k", "inbound_secret": INBOUND,
        "base_url": "http://127.0.0.1:9"})["id"]
    app = create_app(services=services, launcher=Recorder(), redeliverer=Recorder())
    port = free_port()
    # log_config=None: uvicorn's own records (its "Exception in ASGI application") reach the root logger
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    assert wait_until(lambda: uvicorn_server.started, timeout=20, interval=0.05)
    try:
        yield Server(f"http://127.0.0.1:{port}", port, key, services, zendesk, freshdesk)
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=10)
        services.engine.dispose()


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


def _short_body(port: int, key: str) -> socket.socket:
    """A POST declaring 100 bytes of body and sending 16."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        f"POST /v1/investigations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
        + b'{"question": "a'
    )
    return sock


def test_a_body_that_never_arrives_is_a_408(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    sock = _short_body(server.port, server.key)
    answer = b""
    try:  # the server answers on its own once the body's time is up, then closes the connection
        while chunk := sock.recv(4096):
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"did not arrive within 1 seconds" in answer
    assert _errors(caplog) == []
    # the first request for the spec builds it: seconds on a loaded host, so no short client timeout here
    spec = httpx.get(f"{server.base}/openapi.json", timeout=120).json()
    documented = spec["paths"]["/v1/investigations"]["post"]["responses"]
    assert "408" in documented


def test_a_client_gone_mid_body_is_an_info_line_not_an_error(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    _short_body(server.port, server.key).close()
    assert wait_until(lambda: any("client disconnected" in r.getMessage() or r.levelno >= logging.ERROR
                                  for r in caplog.records), timeout=10, interval=0.05)
    assert _errors(caplog) == []
    assert [r.levelname for r in caplog.records if "client disconnected" in r.getMessage()] == ["INFO"]
    # the server is still there for the next client
    assert httpx.get(f"{server.base}/v1/tenant", headers=server.auth).status_code == 200


@pytest.mark.parametrize(
    ("name", "headers"),
    [
        (
            "a timestamp no clock can hold",
            {
                b"X-Zendesk-Webhook-Signature": b"x",
                b"X-Zendesk-Webhook-Signature-Timestamp": b"0001-01-01T00:00:00+23:59",
            },
        ),
        (
            "a year-9999 timestamp west of UTC",
            {
                b"X-Zendesk-Webhook-Signature": b"x",
                b"X-Zendesk-Webhook-Signature-Timestamp": b"9999-12-31T23:59:59-23:59",
            },
        ),
        (
            "a non-ASCII signature",
            {
                b"X-Zendesk-Webhook-Signature": "\u00e9".encode("latin-1"),
                b"X-Zendesk-Webhook-Signature-Timestamp": b"NOW",
            },
        ),
    ],
)
def test_malformed_zendesk_signature_headers_are_401(
    server: Server, caplog: pytest.LogCaptureFixture, name: str, headers: dict[bytes, bytes]
) -> None:
    now = str(int(time.time())).encode()
    sent = {k: now if v == b"NOW" else v for k, v in headers.items()}
    response = httpx.post(f"{server.base}/v1/hooks/zendesk/{server.zendesk}", headers=sent, content=b"{}")
    assert response.status_code == 401, (name, response.text)
    assert _errors(caplog) == []


def test_a_non_ascii_freshdesk_secret_is_401(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    response = httpx.post(f"{server.base}/v1/hooks/freshdesk/{server.freshdesk}", content=b"{}",
                          headers={b"X-Sleuth-Secret": "\u00e9\u00ff".encode("latin-1")})
    assert response.status_code == 401
    assert _errors(caplog) == []


def test_json_nested_past_the_parser_is_a_422_on_both_hooks(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    stamp = str(int(time.time()))
    zendesk = httpx.post(f"{server.base}/v1/hooks/zendesk/{server.zendesk}", content=DEEP, headers={
        "X-Zendesk-Webhook-Signature": zendesk_signature(SIGNING, stamp, DEEP),
        "X-Zendesk-Webhook-Signature-Timestamp": stamp})
    freshdesk = httpx.post(f"{server.base}/v1/hooks/freshdesk/{server.freshdesk}", content=DEEP,
                           headers={"X-Sleuth-Secret": INBOUND})
    for response in (zendesk, freshdesk):
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["msg"] == "JSON nested too deeply"
    assert _errors(caplog) == []


def test_a_last_event_id_past_any_event_id_is_a_400(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    created = httpx.post(
        f"{server.base}/v1/investigations", headers=server.auth, json={"question": "What is SSO?"}
    )
    events = f"{server.base}/v1/investigations/{created.json()['id']}/events"
    response = httpx.get(events, headers={**server.auth, "Last-Event-ID": "9" * 29}, timeout=10)
    assert response.status_code == 400
    assert "Last-Event-ID" in response.json()["detail"]
    with server.services.session() as session:  # terminal: each stream below polls once, then ends
        repo.finish_investigation(session, investigation_id=created.json()["id"], status="refused",
                                  stop_reason="unanswerable")
    assert httpx.get(events, headers={**server.auth, "Last-Event-ID": str(2**31)}).status_code == 400
    for beyond in (str(2**31 - 1), "0"):  # past every event written, yet an id: only the end follows
        resumed = httpx.get(events, headers={**server.auth, "Last-Event-ID": beyond}, timeout=10)
        assert resumed.status_code == 200
        assert "event: end" in resumed.text and "event: trace" not in resumed.text, resumed.text
    superscript = {
        b"Authorization": server.auth["Authorization"].encode(),
        b"Last-Event-ID": "\u00b2".encode(),
    }
    # a digit to Python, not a number: from the start
    fresh = httpx.get(events, headers=superscript, timeout=10)
    assert fresh.status_code == 200 and "event: end" in fresh.text
    assert _errors(caplog) == []


def test_a_secret_over_its_size_limit_is_never_echoed(server: Server) -> None:
    secret = "sk_live_" + "s3cr3t" * 800  # over the tool secret's 4096 characters
    tool = httpx.post(
        f"{server.base}/v1/tools",
        headers=server.auth,
        json={
            "declaration": {"name": "orders", "method": "GET", "url": "http://127.0.0.1:9/orders"},
            "secret": secret,
        },
    )
    channel = httpx.post(f"{server.base}/v1/channels", headers=server.auth, json={
        "name": "mail", "type": "smtp", "host": "smtp.example.com", "port": 587, "starttls": True,
        "username": "u", "password": secret, "from": "bot@example.com"})
    not_an_object = httpx.post(f"{server.base}/v1/channels", headers=server.auth, content=json.dumps(secret))
    for response in (tool, channel, not_an_object):
        assert response.status_code == 422, response.text
        assert "s3cr3t" not in response.text
    assert tool.json()["detail"][0]["loc"] == ["body", "secret"]
