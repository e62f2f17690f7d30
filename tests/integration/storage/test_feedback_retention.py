"""Comments and corrections are personal data: the tenant's retention blanks them in bounded batches (the
rating itself stays, so the quality page does not change), on SQLite and PostgreSQL and through the beat task
on a real worker; removing the tenant removes its ratings and outcomes altogether."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from celery import Celery

from app.tenant_removal import remove_tenant
from storage import _tenants as tenants_repo
from storage import repositories as repo
from storage.models import utcnow
from tests.support.stack import Stack, build_stack, with_new_tenant
from tests.support.wait import wait_until
from workers import names
from workers.app import create_celery


def _rated(stack: Stack, *, days_ago: int, rater: str = "email:ann@acme.test") -> str:
    inv_id = stack.asked("Which plan includes SCIM provisioning?")
    with stack.services.session() as session:
        repo.record_feedback(session, tenant_id=stack.tenant_id, investigation_id=inv_id, rater=rater,
                             rating="wrong", source="link", comment="Ann Example, ann@acme.test, says no",
                             correct_answer="Enterprise only", now=utcnow() - timedelta(days=days_ago))
    return inv_id


def _texts(stack: Stack, inv_id: str) -> list[tuple[str, str | None, str | None]]:
    with stack.services.session() as session:
        return [(f.rating, f.comment, f.correct_answer)
                for f in repo.list_feedback(session, investigation_id=inv_id, current_only=False)]


def test_old_comments_and_corrections_go_in_batches_and_the_ratings_stay(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    other = with_new_tenant(stack)
    old = [_rated(stack, days_ago=100, rater=f"email:r{i}@acme.test") for i in range(5)]
    recent, foreign = _rated(stack, days_ago=10), _rated(other, days_ago=200)
    cutoff = utcnow() - timedelta(days=90)
    rounds = []
    while True:
        with stack.services.session() as session:
            n = repo.purge_feedback_text(session, tenant_id=stack.tenant_id, cutoff=cutoff, batch=2)
        if n == 0:
            break
        rounds.append(n)
    assert rounds == [2, 2, 1]  # never more than a batch per transaction
    for inv_id in old:
        assert _texts(stack, inv_id) == [("wrong", None, None)]
    kept = ("wrong", "Ann Example, ann@acme.test, says no", "Enterprise only")
    assert _texts(stack, recent) == [kept]
    assert _texts(other, foreign) == [kept]  # another tenant's retention is its own
    with stack.services.session() as session:
        assert repo.count_rated(session, tenant_id=stack.tenant_id) == {"wrong": 6}


def test_the_beat_task_blanks_what_passed_the_tenants_retention(tmp_path: Path, redis_url: str,
                                                                redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, retention_batch=3)
    with stack.services.session() as session:
        tenants_repo.update_limits(session, tenant_id=stack.tenant_id, changes={"retention_days": 10})
    expired, kept = _rated(stack, days_ago=11), _rated(stack, days_ago=9)
    app: Celery = create_celery(stack.settings)
    stack.start_worker(queues=names.Q_SOURCES, concurrency=1)
    try:
        stack.wait_ready()
        app.send_task(names.T_RETENTION)
        assert wait_until(lambda: _texts(stack, expired) == [("wrong", None, None)], timeout=60)
    finally:
        stack.stop_workers()
    assert _texts(stack, kept)[0][1] is not None


def test_removing_the_tenant_removes_its_ratings_and_outcomes(
    tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    other = with_new_tenant(stack)
    gone, kept = _rated(stack, days_ago=1), _rated(other, days_ago=1)
    with stack.services.session() as session:
        repo.record_outcome(session, tenant_id=stack.tenant_id, investigation_id=gone, helpdesk="zendesk",
                            ticket_id="42", draft="edited", edit_ratio=0.3)
    done = remove_tenant(stack.services, stack.tenant_id)
    assert done.rows.get("feedback") == 1 and done.rows.get("outcome") == 1
    with stack.services.session() as session:
        assert repo.list_feedback(session, investigation_id=gone, current_only=False) == []
        assert repo.get_outcome(session, investigation_id=gone) is None
    assert len(_texts(other, kept)) == 1
