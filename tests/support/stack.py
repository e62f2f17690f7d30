"""A real queue for tests: settings on one Redis prefix, a database, the embedded search engines with a small
ingested corpus, a tenant, and Celery worker processes started on demand (forked from the zygote of
`tests/support/zygote.py`)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bootstrap import Services
from config.settings import Settings
from tests.support.zygote import spawn_sleuth

T = TypeVar("T")

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
    """One tenant (with the corpus) on one settings/services graph, and the workers this Stack started."""

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
        args = ["worker", "--concurrency", str(concurrency),
                "--name", name or f"w{uuid.uuid4().hex[:6]}", "--loglevel", "WARNING"]
        if queues:
            args += ["-Q", queues]
        if beat:
            args.append("--beat")
        log = self.settings.home / f"worker-{len(self.workers)}.log"
        proc = spawn_sleuth(args, self.env(**extra_env), log)
        self.workers.append(proc)
        return proc

    def wait_ready(self, count: int = 1, timeout: float = 60) -> None:
        from cli.processes import wait_for_workers

        assert self.settings.redis_url
        wait_for_workers(self.settings, self.settings.redis_url, count=count, timeout=timeout)

    def stop_workers(self) -> None:
        from cli.supervisor import stop_group

        for proc in self.workers:
            stop_group(proc, timeout=10)
        self.workers.clear()

    def persisted(self, question: str, *, callback: dict[str, object] | None = None) -> str:
        """The id of a new agentic investigation of this tenant, persisted and never enqueued (a test sends or
        loses its steps itself)."""
        from storage import repositories as repo

        with self.services.session() as session:
            tenant = repo.get_tenant(session, tenant_id=self.tenant_id)
            inv, _ = repo.create_investigation(session, tenant=tenant, question=question, mode="agentic",
                                               callback=callback, budget={}, idempotency_key=None,
                                               deadline_seconds=120)
            return inv.id

    def ask(self, question: str, *, mode: str = "agentic", callback: dict[str, object] | None = None) -> str:
        from cli.commands import create_and_launch

        return create_and_launch(self.services, self.tenant_name, question, mode, callback)

    def wait(self, inv_id: str, timeout: float = 90) -> dict[str, Any]:
        from cli.commands import wait_for

        return wait_for(self.services, inv_id, timeout=timeout)

    def asked(self, question: str) -> str:
        """The id of a new investigation of `question` for this tenant, admitted and not started (the steps
        are the test's to run)."""
        from app.intake import parse_request, submit_investigation
        from storage import repositories as repo

        with self.services.session() as session:
            tenant = repo.get_tenant_by_name(session, name=self.tenant_name)
        return submit_investigation(self.services, tenant=tenant, launch=lambda _i: None,
                                    request=parse_request({"question": question})).id

    def counted(self, call: Callable[[], T]) -> tuple[T, list[str], int]:
        """`call()`'s result, the SQL statements it sent as "VERB table" (``BEGIN`` left out: PostgreSQL's
        driver sends none) and its commits."""
        from sqlalchemy import event

        sent: list[str] = []
        commits = [0]

        def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            words = statement.split()
            if words[0] == "BEGIN":
                return
            table = {"SELECT": "FROM", "INSERT": "INTO", "UPDATE": None}[words[0]]
            name = words[1] if table is None else words[words.index(table) + 1]
            sent.append(f"{words[0]} {name.strip(chr(34))}")

        def commit(_conn: Any) -> None:
            commits[0] += 1

        engine = self.services.engine
        event.listen(engine, "before_cursor_execute", record)
        event.listen(engine, "commit", commit)
        try:
            result = call()
        finally:
            event.remove(engine, "before_cursor_execute", record)
            event.remove(engine, "commit", commit)
        return result, sent, commits[0]


def _new_tenant(services: Services) -> tuple[str, str, str, str]:
    """(id, name, API key, webhook secret) of a new tenant allowed to call back to 127.0.0.1, with the
    corpus ingested for it."""
    from adapters.search.ingest import SourceDocument, ingest
    from storage import repositories as repo

    name = f"t-{uuid.uuid4().hex[:8]}"
    with services.session() as session:
        tenant, key = repo.create_tenant(
            session, name=name, box=services.secret_box(), allowed_hosts=["127.0.0.1"]
        )
        tenant_id, secret = tenant.id, repo.open_webhook_secret(tenant, services.secret_box())
    docs = [SourceDocument(id=d["id"], title=d["title"], text=d["text"]) for d in CORPUS]
    ingest(docs, tenant=tenant_id, backends=list(services.backends.values()))
    return tenant_id, name, key, secret


def build_stack(home: Path, redis_url: str, prefix: str, **overrides: Any) -> Stack:
    """Settings for `home` on one Redis prefix (`overrides` are Settings fields), Services, and a tenant."""
    settings = Settings(home=home, redis_url=redis_url, redis_prefix=prefix, watchdog_interval=1.0,
                        webhook_backoff_base=0.2, webhook_backoff_max=1.0, **overrides)
    services = Services(settings)
    return Stack(settings, services, *_new_tenant(services))


def with_new_tenant(stack: Stack) -> Stack:
    """The same settings, services and running workers, seen as a new tenant of its own: what a test on a
    shared worker works with (it stops no worker of the stack it came from)."""
    return Stack(stack.settings, stack.services, *_new_tenant(stack.services))
