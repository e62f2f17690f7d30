"""The one investigation/delivery → tenant lookup (task dispatch, log context and metrics use it), and what a
retrieval slot reads of its hop: read once per process, bounded, a missing row never cached; on SQLite and
PostgreSQL."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlmodel import Session

from investigation.errors import NotFound
from storage import _owners
from storage._plans import forget_plans
from storage.models import Investigation, Tenant
from storage.repositories import (
    PlannedHop,
    atomic,
    delivery_owner,
    get_or_create_delivery,
    investigation_tenant,
    planned_hop,
    remember_plan,
    save_hop,
)
from tests.integration.storage.conftest import new_investigation


def test_an_investigations_tenant_is_read_once(session: Session, tenant: Tenant, other_tenant: Tenant,
                                               statements: list[str]) -> None:
    mine, theirs = new_investigation(session, tenant), new_investigation(session, other_tenant)
    session.expunge_all()  # nothing answered from the session's identity map: only the cache may skip SQL
    statements.clear()
    assert investigation_tenant(session, investigation_id=mine.id) == tenant.id
    assert investigation_tenant(session, investigation_id=theirs.id) == other_tenant.id
    read = len(statements)
    assert read >= 2
    session.expunge_all()
    for _ in range(3):
        assert investigation_tenant(session, investigation_id=mine.id) == tenant.id
        assert investigation_tenant(session, investigation_id=theirs.id) == other_tenant.id
    assert len(statements) == read  # answered from the cache


def test_a_deliverys_owner_is_read_once(session: Session, investigation: Investigation,
                                        statements: list[str]) -> None:
    delivery = get_or_create_delivery(
        session,
        investigation_id=investigation.id,
        tenant_id=investigation.tenant_id,
        channel="webhook",
        target={"url": "http://127.0.0.1/hook"},
    )
    session.expunge_all()
    statements.clear()
    owner = (investigation.id, investigation.tenant_id)
    assert delivery_owner(session, delivery_id=delivery.id) == owner
    read = len(statements)
    session.expunge_all()
    assert delivery_owner(session, delivery_id=delivery.id) == owner
    assert len(statements) == read


def test_a_missing_row_is_not_found_and_not_cached(session: Session, tenant: Tenant,
                                                   statements: list[str]) -> None:
    for _ in range(2):
        with pytest.raises(NotFound, match="investigation nope"):
            investigation_tenant(session, investigation_id="nope")
        with pytest.raises(NotFound, match="delivery msg_nope"):
            delivery_owner(session, delivery_id="msg_nope")
    assert len(statements) >= 4  # asked each time: a row committed a moment later is found
    inv = Investigation(id="late", tenant_id=tenant.id, question="q", mode="agentic")
    session.add(inv)
    session.commit()
    assert investigation_tenant(session, investigation_id="late") == tenant.id


def test_the_cache_is_bounded_and_drops_the_least_recent(
    session: Session, tenant: Tenant, statements: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_owners, "_OWNERS", _owners.BoundedLRU(2))
    a, b, c = (new_investigation(session, tenant) for _ in range(3))
    session.expunge_all()

    def read(inv_id: str) -> bool:
        """Did looking up `inv_id` go to the database?"""
        before = len(statements)
        assert investigation_tenant(session, investigation_id=inv_id) == tenant.id
        session.expunge_all()
        return len(statements) > before

    assert [read(a.id), read(b.id), read(a.id)] == [True, True, False]  # a is now the most recent
    assert read(c.id)  # b, the least recent, makes room
    assert len(_owners._OWNERS) == 2
    assert [read(a.id), read(c.id), read(b.id)] == [False, False, True]
    assert _owners.OWNERS_CACHED >= 1000  # the process-wide bound: in-flight investigations stay cached


def test_a_planned_hop_is_read_once_and_an_unplanned_one_never_cached(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    forget_plans()
    assert planned_hop(session, investigation_id=investigation.id, number=1) is None
    assert planned_hop(session, investigation_id="nope", number=1) is None
    save_hop(session, investigation_id=investigation.id, number=1, engines=["bm25"],
             queries=[{"text": "sso plan"}, {"text": "saml"}])
    session.expunge_all()
    statements.clear()
    expected = PlannedHop(tenant_id=investigation.tenant_id, audience="agent", principals=(),
                          queries=("sso plan", "saml"), corpus_version=0)
    assert planned_hop(session, investigation_id=investigation.id, number=1) == expected
    read = len(statements)
    assert read >= 2
    session.expunge_all()
    assert planned_hop(session, investigation_id=investigation.id, number=1) == expected
    assert len(statements) == read  # answered from the cache
    forget_plans()


def test_the_slots_of_a_hop_starting_together_read_its_plan_once(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    forget_plans()
    save_hop(session, investigation_id=investigation.id, number=1, engines=["bm25", "vector"],
             queries=[{"text": "sso plan"}])
    statements.clear()
    engine = session.get_bind()
    start = threading.Barrier(4)

    def slot() -> PlannedHop | None:
        with Session(engine) as own:  # each slot its own session, as each task has
            start.wait()
            return planned_hop(own, investigation_id=investigation.id, number=1)

    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda _i: slot(), range(4)))
    assert len(set(found)) == 1 and found[0] is not None
    # the investigation, the hop, the tenant's corpus version
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 3
    forget_plans()


def test_a_plan_remembered_by_the_step_that_saved_it_is_kept_only_once_committed(
        session: Session, investigation: Investigation, statements: list[str]) -> None:
    forget_plans()
    expected = PlannedHop(tenant_id=investigation.tenant_id, audience="agent", principals=("u1",),
                          queries=("sso plan",), corpus_version=0)

    def remember(number: int) -> None:
        remember_plan(
            session,
            investigation_id=investigation.id,
            number=number,
            tenant_id=investigation.tenant_id,
            audience="agent",
            principals=["u1"],
            queries=["sso plan"],
        )

    with pytest.raises(RuntimeError), atomic(session):  # rolled back: nothing kept
        save_hop(
            session, investigation_id=investigation.id, number=1, engines=["bm25"], queries=[{"text": "x"}]
        )
        remember(1)
        raise RuntimeError("crash mid-step")
    assert planned_hop(session, investigation_id=investigation.id, number=1) is None
    with atomic(session):
        save_hop(session, investigation_id=investigation.id, number=2, engines=["bm25"],
                 queries=[{"text": "sso plan"}])
        remember(2)
    statements.clear()
    assert planned_hop(session, investigation_id=investigation.id, number=2) == expected
    assert statements == []  # kept by the step that planned it: no read
    forget_plans()
