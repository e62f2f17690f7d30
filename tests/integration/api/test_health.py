"""Liveness and readiness: /readyz names the dependency that is down."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from bootstrap import Services
from tests.integration.api.conftest import Api, Recorder, make_settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_healthz(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}


def test_readyz_ok_when_everything_answers(api: Api) -> None:
    response = api.client.get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["checks"]["database"] == "ok" and body["checks"]["redis"] == "ok"
    assert any(name.startswith("search:") for name in body["checks"])
    assert body["failed"] == []


def test_readyz_503_naming_redis_when_redis_is_down(tmp_path: Path, db_url: str, redis_prefix: str) -> None:
    services = Services(make_settings(tmp_path / "home", db_url, f"redis://127.0.0.1:{_closed_port()}/0",
                                      redis_prefix))
    try:
        with TestClient(create_app(services=services, launcher=Recorder(), redeliverer=Recorder())) as client:
            response = client.get("/readyz")
        body = response.json()
        assert response.status_code == 503
        assert "redis" in body["failed"] and body["checks"]["database"] == "ok"
        assert body["status"] == "unavailable"
        assert client.get("/healthz").status_code == 200
    finally:
        services.engine.dispose()


def test_readyz_names_a_down_database_without_its_details(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    port = _closed_port()
    db = f"postgresql+psycopg://sleuth_user@127.0.0.1:{port}/secret_customer_db"
    services = Services(make_settings(tmp_path / "home", db, redis_url, redis_prefix))
    with TestClient(create_app(services=services, launcher=Recorder(), redeliverer=Recorder())) as client:
        response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["failed"] == ["database"] and body["checks"]["database"] == "failed"
    assert body["checks"]["redis"] == "ok"
    for secret in ("secret_customer_db", str(port), "127.0.0.1", "sleuth_user", "Error"):
        assert secret not in response.text
    # the operator still finds the reason, in the server log
    assert any("secret_customer_db" in r.getMessage() or str(port) in r.getMessage() for r in caplog.records)
