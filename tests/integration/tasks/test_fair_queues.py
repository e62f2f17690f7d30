"""Fair scheduling at the queues: a tenant asking one question is served ahead of another tenant's burst
(real Redis broker with priorities, a real worker, real intake with in-flight caps)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from celery import Celery

from app import admission
from app.intake import parse_request, submit_investigation
from storage import repositories as repo
from tests.support.stack import CORPUS, Stack, build_stack
from workers import names

QUESTIONS = ["Which plan includes SCIM provisioning?", "What does error ERR_4021 mean?",
             "How much does the Team plan cost?", "What uptime does the Business plan guarantee?",
             "Where does the Frankfurt region store data?", "Which plan includes SSO?"]


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Stack]:
    built = build_stack(tmp_path / "home", redis_url, redis_prefix)  # tenant_max_in_flight: the default, 2
    try:
        yield built
    finally:
        built.stop_workers()


def _second_tenant(stack: Stack) -> str:
    from adapters.search.ingest import SourceDocument, ingest

    with stack.services.session() as session:
        tenant, _ = repo.create_tenant(
            session, name=f"{stack.tenant_name}-b", box=stack.services.secret_box()
        )
    docs = [SourceDocument(id=d["id"], title=d["title"], text=d["text"]) for d in CORPUS]
    ingest(docs, tenant=tenant.id, backends=list(stack.services.backends.values()))
    return tenant.id


def _submit(stack: Stack, tenant_id: str, question: str, app: Celery) -> str:
    from tasks import workflow

    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
    return submit_investigation(stack.services, tenant=tenant, request=parse_request({"question": question}),
                                launch=lambda i: workflow.launch(app, i), rate_limit=False).id


def test_priority_falls_with_a_tenants_load(stack: Stack) -> None:
    assert admission.priority(stack.services, "nobody") == 0
    running = f"{stack.settings.redis_prefix}:fair:running:t1"
    held = f"{stack.settings.redis_prefix}:fair:held:t1"
    stack.services.redis.sadd(running, "a", "b")
    assert admission.priority(stack.services, "t1") == 1
    stack.services.redis.rpush(held, *[f"h{i}" for i in range(98)])
    assert admission.priority(stack.services, "t1") == 7  # 100 in flight or waiting: ceil(log2(100))
    stack.services.redis.rpush(held, *[f"x{i}" for i in range(2000)])
    assert admission.priority(stack.services, "t1") == names.PRIORITY_STEPS[-1]


def test_a_single_question_overtakes_another_tenants_burst(stack: Stack) -> None:
    from workers.app import create_celery

    app = create_celery(stack.settings)
    small = _second_tenant(stack)
    # The burst and the single question are all in the queues before the (one-process) worker starts, so the
    # order in which they finish is decided by the queues alone, not by timing.
    burst = [
        _submit(stack, stack.tenant_id, QUESTIONS[i % len(QUESTIONS)] + f" (case {i})", app) for i in range(6)
    ]
    single = _submit(stack, small, "Which plan includes SCIM provisioning?", app)
    stack.start_worker(concurrency=1)
    views = {i: stack.wait(i, timeout=240) for i in [single, *burst]}
    assert all(v["status"] in ("answered", "refused") for v in views.values()), views

    def finished(inv_id: str) -> datetime:
        return datetime.fromisoformat(str(views[inv_id]["finished_at"]))

    # Two of the burst were admitted (its in-flight cap) and started before the single question did; with
    # fair queues their remaining steps wait behind the single question's, so it finishes first.
    assert all(finished(single) < finished(b) for b in burst), sorted(views, key=finished)
