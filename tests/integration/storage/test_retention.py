"""Retention: a finished investigation past its tenant's retention loses its trace events and evidence text in
bounded batches; its answer, citations and ratings stay; recent or unfinished investigations and other
tenants are untouched. Then the beat task itself, on a real worker."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from sqlalchemy import func, select, update
from sqlmodel import col

from storage import _feedback as feedback_repo
from storage import _tenants as tenants_repo
from storage import repositories as repo
from storage import retention
from storage.models import EvidenceRecord, Investigation, TraceEvent, utcnow
from tasks import inline
from tests.support.stack import Stack, build_stack, with_new_tenant
from tests.support.wait import wait_until
from workers import names
from workers.app import create_celery

QUESTION = "Which plan includes SCIM provisioning and what does it cost?"


def _answered(stack: Stack, age_days: int) -> str:
    inv_id = stack.asked(QUESTION)
    inline.run(stack.services, inv_id, deliver=False)
    _age(stack, inv_id, age_days)
    return inv_id


def _age(stack: Stack, inv_id: str, days: int) -> None:
    with stack.services.session() as session:
        session.execute(update(Investigation).where(col(Investigation.id) == inv_id)
                        .values(created_at=utcnow() - timedelta(days=days)))
        session.commit()


def _left(stack: Stack, inv_id: str) -> tuple[int, int]:
    """(trace events, evidence rows with text) of the investigation."""
    with stack.services.session() as session:
        events = session.execute(select(func.count()).select_from(TraceEvent)
                                 .where(col(TraceEvent.investigation_id) == inv_id)).scalar_one()
        texts = session.execute(select(func.count()).select_from(EvidenceRecord).where(
            col(EvidenceRecord.investigation_id) == inv_id, col(EvidenceRecord.text) != "")).scalar_one()
    return int(events), int(texts)


def _purge_all(stack: Stack, tenant_id: str, days: int, batch: int) -> list[tuple[int, int]]:
    cutoff = utcnow() - timedelta(days=days)
    rounds: list[tuple[int, int]] = []
    while True:
        with stack.services.session() as session:
            done = (retention.purge_events(session, tenant_id=tenant_id, cutoff=cutoff, batch=batch),
                    retention.purge_evidence_text(session, tenant_id=tenant_id, cutoff=cutoff, batch=batch))
        if done == (0, 0):
            return rounds
        rounds.append(done)


def test_expired_events_and_evidence_text_go_in_batches_and_the_answer_stays(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    other = with_new_tenant(stack)
    old, recent, foreign = _answered(stack, 91), _answered(stack, 89), _answered(other, 200)
    unfinished = stack.asked(QUESTION)
    _age(stack, unfinished, 120)
    with stack.services.session() as session:
        answer = repo.get_investigation(session, investigation_id=old)
        kept_answer, kept_citations = answer.answer, answer.citations
        feedback_repo.record_feedback(session, tenant_id=stack.tenant_id, investigation_id=old, rater="ann",
                                      rating="helpful", source="link")
    events, texts = _left(stack, old)
    assert events > 2 and texts > 0 and kept_answer and kept_citations
    untouched = {i: _left(stack, i) for i in (recent, foreign, unfinished)}

    rounds = _purge_all(stack, stack.tenant_id, days=90, batch=2)

    assert all(e <= 2 and t <= 2 for e, t in rounds)  # never more than a batch per transaction
    assert sum(e for e, _ in rounds) == events and sum(t for _, t in rounds) == texts
    assert _left(stack, old) == (0, 0)
    assert {i: _left(stack, i) for i in untouched} == untouched
    with stack.services.session() as session:
        after = repo.get_investigation(session, investigation_id=old)
        assert (after.answer, after.citations, after.status) == (kept_answer, kept_citations, "answered")
        assert len(feedback_repo.list_feedback(session, investigation_id=old)) == 1
        titles = session.execute(select(col(EvidenceRecord.title)).where(
            col(EvidenceRecord.investigation_id) == old)).scalars().all()
        assert titles and all(titles)  # what a citation points at is still named


def test_a_tenants_own_retention_overrides_the_default(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    with stack.services.session() as session:
        tenant = tenants_repo.update_limits(session, tenant_id=stack.tenant_id, changes={"retention_days": 7})
    assert retention.retention_days(tenant.limits, 90) == 7
    assert retention.retention_days({}, 90) == 90
    with stack.services.session() as session, pytest.raises(Exception, match="limits.retention_days"):
        tenants_repo.update_limits(session, tenant_id=stack.tenant_id, changes={"retention_days": 0})


def test_the_beat_task_removes_what_passed_each_tenants_retention(tmp_path: Path, redis_url: str,
                                                                    redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, retention_batch=3)
    other = with_new_tenant(stack)
    with stack.services.session() as session:
        tenants_repo.update_limits(session, tenant_id=stack.tenant_id, changes={"retention_days": 10})
    short, long_kept = _answered(stack, 11), _answered(other, 11)  # `other` keeps the default 90 days
    kept = _left(other, long_kept)
    app: Celery = create_celery(stack.settings)
    stack.start_worker(queues=names.Q_SOURCES, concurrency=1)
    try:
        stack.wait_ready()
        app.send_task(names.T_RETENTION)
        assert wait_until(lambda: _left(stack, short) == (0, 0), timeout=60)
    finally:
        stack.stop_workers()
    assert _left(stack, long_kept) == kept
