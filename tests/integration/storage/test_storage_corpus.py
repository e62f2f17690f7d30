"""A tenant's corpus version in the database: per tenant, raised by one at a time even when several ingests
race, and read by a hop when it is planned (the version its cached searches are looked up under)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import Engine
from sqlmodel import Session

from storage._plans import forget_plans
from storage.models import Investigation, Tenant
from storage.repositories import (
    bump_corpus_version,
    corpus_version,
    planned_hop,
    remember_plan,
    save_hop,
)


def test_versions_are_per_tenant_and_start_at_zero(
    session: Session, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert corpus_version(session, tenant_id=tenant.id) == 0
    assert bump_corpus_version(session, tenant_id=tenant.id) == 1
    assert bump_corpus_version(session, tenant_id=tenant.id) == 2
    assert corpus_version(session, tenant_id=tenant.id) == 2
    assert corpus_version(session, tenant_id=other_tenant.id) == 0


def test_racing_ingests_each_raise_the_version_once(db_engine: Engine, tenant: Tenant) -> None:
    def bump(_: int) -> int:
        with Session(db_engine) as own:
            return bump_corpus_version(own, tenant_id=tenant.id)

    with ThreadPoolExecutor(max_workers=4) as pool:
        seen = sorted(pool.map(bump, range(12)))
    assert seen == list(range(1, 13))


def _planned_version(session: Session, investigation: Investigation, number: int) -> int:
    planned = planned_hop(session, investigation_id=investigation.id, number=number)
    assert planned is not None
    return planned.corpus_version


def test_a_hop_reads_the_version_when_it_is_planned(session: Session, investigation: Investigation) -> None:
    forget_plans()
    save_hop(
        session,
        investigation_id=investigation.id,
        number=1,
        queries=[{"text": "sso"}],
        engines=["bm25"],
        tools=[],
    )
    assert _planned_version(session, investigation, 1) == 0
    bump_corpus_version(session, tenant_id=investigation.tenant_id)
    remember_plan(session, investigation_id=investigation.id, number=2, tenant_id=investigation.tenant_id,
                  audience="agent", principals=[], queries=["saml"])
    assert _planned_version(session, investigation, 2) == 1
    # hop 1 keeps the version it was planned under: its searches look up the entries built under it
    assert _planned_version(session, investigation, 1) == 0
    forget_plans()
