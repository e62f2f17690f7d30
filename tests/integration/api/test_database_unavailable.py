"""The database unreachable: every API call that needs it answers 503 + Retry-After, writes nothing and
says nothing about the database (its details go to the server log)."""

from __future__ import annotations

import socket
from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
from bootstrap import Services
from tests.integration.api.conftest import Recorder, make_settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_intake_answers_503_with_retry_after_and_launches_nothing(tmp_path: Path, redis_url: str,
                                                                     redis_prefix: str) -> None:
    port = _closed_port()
    db = f"postgresql+psycopg://sleuth_user@127.0.0.1:{port}/secret_customer_db"
    services = Services(make_settings(tmp_path / "home", db, redis_url, redis_prefix))
    launcher = Recorder()
    with TestClient(create_app(services=services, launcher=launcher, redeliverer=Recorder())) as client:
        response = client.post("/v1/investigations", json={"question": "How do I reset my password?"},
                               headers={"Authorization": "Bearer sk_anything", "Idempotency-Key": "k1"})
        read = client.get("/v1/investigations/abc", headers={"Authorization": "Bearer sk_anything"})
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert read.status_code == 503 and "retry-after" in read.headers
    assert launcher.calls == []
    for secret in ("secret_customer_db", str(port), "sleuth_user", "psycopg"):
        assert secret not in response.text
