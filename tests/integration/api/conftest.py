"""The API against a real database and a real Redis, with a recording launcher instead of Celery."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from bootstrap import Services
from config.settings import Settings
from storage import repositories as repo


@dataclass
class Recorder:
    """Stands in for the queue: records every id it is asked to enqueue; `fail` makes it raise."""

    calls: list[str] = field(default_factory=list)
    fail: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, item_id: str) -> None:
        if self.fail:
            raise ConnectionError("broker unreachable")
        with self.lock:
            self.calls.append(item_id)


@dataclass
class Api:
    client: TestClient
    services: Services
    launcher: Recorder
    redeliverer: Recorder
    tenant_id: str
    key: str
    other_key: str

    def auth(self, key: str | None = None, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.key}", **extra}

    def post(self, body: Any, key: str | None = None, **headers: str) -> Any:
        return self.client.post("/v1/investigations", json=body, headers=self.auth(key, **headers))


def make_settings(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str, **extra: Any) -> Settings:
    return Settings(
        home=tmp_path, database_url=db_url, redis_url=redis_url, redis_prefix=redis_prefix, **extra
    )


@pytest.fixture()
def services(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str) -> Iterator[Services]:
    svc = Services(make_settings(tmp_path / "home", db_url, redis_url, redis_prefix))
    yield svc
    svc.engine.dispose()


def new_tenant(services: Services, limits: dict[str, Any] | None = None,
               allowed_hosts: list[str] | None = None) -> tuple[str, str]:
    with services.session() as session:
        tenant, key = repo.create_tenant(
            session,
            name=f"t-{uuid.uuid4().hex[:10]}",
            box=services.secret_box(),
            limits=limits,
            allowed_hosts=allowed_hosts or [],
        )
        return tenant.id, key


@pytest.fixture()
def api(services: Services) -> Iterator[Api]:
    launcher, redeliverer = Recorder(), Recorder()
    app = create_app(services=services, launcher=launcher, redeliverer=redeliverer)
    tenant_id, key = new_tenant(services, limits={"max_hops": 2})
    _, other_key = new_tenant(services)
    with TestClient(app) as client:
        yield Api(client, services, launcher, redeliverer, tenant_id, key, other_key)


def count_investigations(services: Services, tenant_id: str) -> int:
    from sqlmodel import select

    from storage.models import Investigation

    with services.session() as session:
        return len(session.exec(select(Investigation).where(Investigation.tenant_id == tenant_id)).all())
