"""Ratings and outcomes on SQLite and PostgreSQL: one current rating per rater (the history kept), checked
input naming the field, another tenant's investigation refused, outcomes upserted, retention deletes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlmodel import Session

from investigation.errors import NotFound, ValidationFailed
from storage import repositories as repo
from storage.models import Investigation, Tenant
from tests.integration.storage.conftest import new_investigation
from tests.integration.storage.rows import outcome, rate


def test_the_last_rating_of_a_rater_counts_and_the_history_stays(session: Session, tenant: Tenant,
                                                                  investigation: Investigation) -> None:
    t0 = datetime(2026, 12, 1, 9, 0)
    for i, rating in enumerate(("wrong", "partly", "helpful")):
        rate(session, tenant.id, investigation.id, rating, rater="ann@acme.test",
             now=t0 + timedelta(minutes=i))
    repo.record_feedback(session, tenant_id=tenant.id, investigation_id=investigation.id, rater="bob",
                         rating="wrong", source="api", comment="  Plan <b>Pro</b> has SSO\x00 ",
                         correct_answer="Pro and Enterprise", now=t0 + timedelta(minutes=5))
    current = repo.list_feedback(session, investigation_id=investigation.id)
    assert [(f.rater, f.rating) for f in current] == [("ann@acme.test", "helpful"), ("bob", "wrong")]
    # text kept as typed (escaped when shown), controls gone
    assert current[1].comment == "Plan <b>Pro</b> has SSO"
    history = repo.list_feedback(session, investigation_id=investigation.id, current_only=False)
    assert [f.rating for f in history] == ["wrong", "partly", "helpful", "wrong"]
    assert repo.rating_counts(session, investigation_ids=[investigation.id]) == {
        investigation.id: {"helpful": 1, "wrong": 1}}
    assert [f.rating for f in repo.tenant_feedback(session, tenant_id=tenant.id, since=t0,
                                                   ratings=("wrong",))] == ["wrong"]


@pytest.mark.parametrize(("field", "kwargs"), [
    ("rating", {"rating": "great"}),
    ("comment", {"comment": "x" * 2001}),
    ("correct_answer", {"correct_answer": "y" * 2001}),
    ("rater", {"rater": "  "}),
    ("source", {"source": "fax"}),
])
def test_bad_input_names_its_field_and_records_nothing(session: Session, tenant: Tenant,
                                                       investigation: Investigation, field: str,
                                                       kwargs: dict[str, str]) -> None:
    args: dict[str, Any] = {"rating": "helpful", "rater": "ann", "source": "link", **kwargs}
    with pytest.raises(ValidationFailed) as caught:
        repo.record_feedback(session, tenant_id=tenant.id, investigation_id=investigation.id, **args)
    assert caught.value.field == field
    assert repo.list_feedback(session, investigation_id=investigation.id, current_only=False) == []


def test_a_comment_of_exactly_the_cap_is_kept(
    session: Session, tenant: Tenant, investigation: Investigation
) -> None:
    row = repo.record_feedback(session, tenant_id=tenant.id, investigation_id=investigation.id, rater="ann",
                               rating="partly", source="link", comment="z" * 2000)
    assert row.comment == "z" * 2000


def test_another_tenants_investigation_is_not_found(session: Session, tenant: Tenant, other_tenant: Tenant,
                                                    investigation: Investigation) -> None:
    with pytest.raises(NotFound):
        rate(session, other_tenant.id, investigation.id, "wrong", rater="eve", source="api")
    with pytest.raises(NotFound):
        rate(session, tenant.id, "0" * 32, "wrong", rater="eve", source="api")
    assert repo.list_feedback(session, investigation_id=investigation.id, current_only=False) == []


def test_concurrent_presses_leave_one_current_rating(session_factory: Callable[[], Session], tenant: Tenant,
                                                     investigation: Investigation) -> None:
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def press(rating: str) -> None:
        try:
            with session_factory() as s:
                barrier.wait()
                repo.record_feedback(s, tenant_id=tenant.id, investigation_id=investigation.id, rater="ann",
                                     rating=rating, source="link")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=press, args=(r,)) for r in ("helpful", "partly", "wrong", "helpful")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with session_factory() as s:
        assert len(repo.list_feedback(s, investigation_id=investigation.id)) == 1
        assert len(repo.list_feedback(s, investigation_id=investigation.id, current_only=False)) == 4


def test_outcomes_are_upserted_and_found_by_ticket(session: Session, tenant: Tenant) -> None:
    inv = new_investigation(session, tenant, idempotency_key="zendesk:ch_1:42:ticket")
    new_investigation(session, tenant, idempotency_key="zendesk:ch_1:420:ticket")
    found = repo.ticket_investigation(session, tenant_id=tenant.id, key_prefix="zendesk:ch_1:42:")
    assert found is not None and found.id == inv.id
    assert repo.ticket_investigation(session, tenant_id=tenant.id, key_prefix="zendesk:ch_1:4%") is None
    outcome(session, tenant.id, inv.id, "42", draft="edited", edit_ratio=0.25,
            replied_at=datetime(2026, 12, 1))
    row = outcome(session, tenant.id, inv.id, "42", reopened=True, reopened_at=datetime(2026, 12, 3))
    assert (row.draft, row.edit_ratio, row.reopened) == ("edited", 0.25, True)
    stored = repo.get_outcome(session, investigation_id=inv.id)
    assert stored is not None and stored.reopened_at == datetime(2026, 12, 3)
    with pytest.raises(ValidationFailed) as caught:
        outcome(session, tenant.id, inv.id, "42", draft="ignored")
    assert caught.value.field == "draft"


def test_retention_removes_a_tenants_old_feedback_only(session: Session, tenant: Tenant, other_tenant: Tenant,
                                                       investigation: Investigation) -> None:
    theirs = new_investigation(session, other_tenant)
    old, new = datetime(2026, 1, 1), datetime(2026, 12, 1)
    rate(session, tenant.id, investigation.id, "wrong", rater="a", comment="personal", now=old)
    rate(session, tenant.id, investigation.id, "helpful", rater="b", now=new)
    rate(session, other_tenant.id, theirs.id, "wrong", rater="a", now=old)
    assert repo.delete_feedback_before(session, tenant_id=tenant.id, before=datetime(2026, 6, 1)) == 1
    assert [
        f.rater for f in repo.list_feedback(session, investigation_id=investigation.id, current_only=False)
    ] == ["b"]
    assert len(repo.list_feedback(session, investigation_id=theirs.id)) == 1
