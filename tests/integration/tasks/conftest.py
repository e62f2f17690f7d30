"""A real queue for integration tests: Redis (the shared fixture), a real Celery worker subprocess,
a real database, the embedded search engines with a small ingested corpus."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bootstrap import Services
from config.settings import Settings

CORPUS = [
    {"id": "plans", "title": "Plans and pricing",
     "text": "Acme offers three plans. The Team plan costs 20 dollars per user per month and includes SSO. "
             "The Business plan costs 45 dollars per user per month and includes SCIM provisioning and "
             "data residency in the Frankfurt region."},
    {"id": "sla", "title": "Service level agreement",
     "text": "The Business plan guarantees 99.95 percent monthly uptime. The Team plan guarantees 99.9 "
             "percent. Service credits of 10 percent are paid when uptime falls below the guarantee."},
    {"id": "frankfurt", "title": "Frankfurt region",
     "text": "The Frankfurt region (eu-central) stores all customer data inside Germany. It is available "
             "to customers on the Business plan."},
    {"id": "err-4021", "title": "Error ERR_4021",
     "text": "ERR_4021 means the API key was rotated and the old key has expired. Create a new key in "
             "Settings, API keys."},
]


@dataclass
class Stack:
    settings: Settings
    services: Services
    tenant_id: str
    tenant_name: str
    api_key: str
    webhook_secret: str
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.settings.as_env())
        env.update(extra)
        return env

    def start_worker(self, *, concurrency: int = 2, beat: bool = False, name: str | None = None,
                     queues: str | None = None, **extra_env: str) -> subprocess.Popen[bytes]:
        args = [sys.executable, "-m", "cli.main", "worker", "--concurrency", str(concurrency),
                "--name", name or f"w{uuid.uuid4().hex[:6]}", "--loglevel", "WARNING"]
        if queues:
            args += ["-Q", queues]
        if beat:
            args.append("--beat")
        log = open(self.settings.home / f"worker-{len(self.workers)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(args, env=self.env(**extra_env), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.workers.append(proc)
        return proc

    def wait_ready(self, count: int = 1, timeout: float = 60) -> None:
        from cli.processes import wait_for_workers

        assert self.settings.redis_url
        wait_for_workers(self.settings, self.settings.redis_url, count=count, timeout=timeout)

    def stop_workers(self) -> None:
        from cli.processes import stop_process

        for proc in self.workers:
            stop_process(proc, timeout=10)
        self.workers.clear()

    def ask(self, question: str, *, mode: str = "agentic", callback: dict[str, object] | None = None) -> str:
        from cli.commands import create_and_launch

        return create_and_launch(self.services, self.tenant_name, question, mode, callback)

    def wait(self, inv_id: str, timeout: float = 90) -> dict[str, object]:
        from cli.commands import wait_for

        return wait_for(self.services, inv_id, timeout=timeout)


def build_stack(home: Path, redis_url: str, prefix: str, **overrides: object) -> Stack:
    from adapters.search.ingest import SourceDocument, ingest
    from storage import repositories as repo

    settings = Settings(home=home, redis_url=redis_url, redis_prefix=prefix, watchdog_interval=1.0,
                        webhook_backoff_base=0.2, webhook_backoff_max=1.0, **overrides)
    services = Services(settings)
    name = f"t-{uuid.uuid4().hex[:8]}"
    with services.session() as session:
        tenant, key = repo.create_tenant(session, name=name, allowed_hosts=["127.0.0.1"])
        tenant_id, secret = tenant.id, tenant.webhook_secret
    docs = [SourceDocument(**d) for d in CORPUS]
    ingest(docs, tenant=tenant_id, backends=list(services.backends.values()))
    return Stack(settings, services, tenant_id, name, key, secret)


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> Iterator[Stack]:
    """A fresh stack per test, on SQLite and on PostgreSQL (the `db_url` fixture's two params)."""
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    try:
        yield built
    finally:
        built.stop_workers()


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.1) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
