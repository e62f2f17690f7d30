"""The quality report on SQLite and PostgreSQL: weekly volume by status, breakdowns by route and audience,
current ratings, draft outcomes and reopen counts, latency percentiles, tool and delivery failures; another
tenant's rows and rows outside the period never count."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlmodel import Session, col, update

from storage import repositories as repo
from storage.models import Investigation, Tenant
from tests.integration.storage.conftest import new_investigation
from tests.integration.storage.rows import outcome, rate

MONDAY = datetime(2026, 11, 23, 10, 0)


def _finished(session: Session, tenant: Tenant, *, status: str, route: str, at: datetime, seconds: float,
              audience: str = "agent") -> Investigation:
    inv = new_investigation(session, tenant, audience=audience)
    repo.update_investigation(session, investigation_id=inv.id, route=route)
    repo.finish_investigation(session, investigation_id=inv.id, status=status, stop_reason="x", answer="a")
    # Back-dated by hand: intake stamps the creation time and nothing in the product moves it.
    session.exec(update(Investigation).where(col(Investigation.id) == inv.id)
                 .values(created_at=at, finished_at=at + timedelta(seconds=seconds)))
    session.commit()
    return inv


def test_the_report_counts_what_it_should(session: Session, tenant: Tenant, other_tenant: Tenant) -> None:
    a = _finished(session, tenant, status="answered", route="lookup", at=MONDAY, seconds=2)
    b = _finished(
        session, tenant, status="answered", route="lookup", at=MONDAY + timedelta(days=1), seconds=4
    )
    c = _finished(session, tenant, status="refused", route="out_of_corpus", at=MONDAY + timedelta(days=7),
                  seconds=1, audience="customer")
    _finished(session, tenant, status="failed", route="multi_hop", at=MONDAY + timedelta(days=8), seconds=30)
    # before
    _finished(session, tenant, status="answered", route="lookup", at=MONDAY - timedelta(days=60), seconds=9)
    theirs = _finished(session, other_tenant, status="answered", route="lookup", at=MONDAY, seconds=1)
    for inv, rating in ((a, "helpful"), (b, "wrong"), (c, "partly")):
        rate(session, tenant.id, inv.id, rating)
    rate(session, tenant.id, b.id, "helpful")  # b's current rating is now helpful
    rate(session, other_tenant.id, theirs.id, "wrong")
    outcome(session, tenant.id, a.id, "1", draft="edited", edit_ratio=0.2, reopened=True)
    outcome(session, tenant.id, b.id, "2", draft="unchanged", edit_ratio=0.0)
    repo.add_events(session, [
        repo.new_event(investigation_id=a.id, step_key="t1", kind="tool_call", data={"error": None}),
        repo.new_event(investigation_id=a.id, step_key="t2", kind="tool_call", data={"error": "HTTP 500"}),
        repo.new_event(investigation_id=b.id, step_key="t3", kind="tool_refused", data={"reason": "owner"}),
    ])
    report = repo.quality_report(session, tenant_id=tenant.id, since=MONDAY - timedelta(days=1),
                                 until=MONDAY + timedelta(days=14))
    assert report.total.investigations == 4
    assert report.total.status == {"answered": 2, "refused": 1, "failed": 1}
    assert {w: s.investigations for w, s in report.weeks.items()} == {"2026-11-23": 2, "2026-11-30": 2}
    assert report.total.ratings == {"helpful": 2, "partly": 1}
    assert report.routes["lookup"].ratings == {"helpful": 2}
    assert report.audiences["customer"].status == {"refused": 1}
    assert report.total.drafts == {"edited": 1, "unchanged": 1}
    assert (report.total.reopened, report.total.followed) == (1, 2)
    assert report.edit_ratio_mean == pytest.approx(0.2)
    assert report.latency["all"]["p50"] == pytest.approx(3.0, abs=0.01)
    assert report.latency["lookup"]["p95"] == pytest.approx(3.9, abs=0.01)
    assert report.tools == {"calls": 2, "errors": 1, "refused": 1}
    assert report.total.row()["wrong"] == 0


def test_an_empty_period(session: Session, tenant: Tenant) -> None:
    report = repo.quality_report(session, tenant_id=tenant.id, since=MONDAY, until=MONDAY + timedelta(days=7))
    assert report.total.investigations == 0
    assert report.latency.get("all", {}).get("p50") is None
    assert report.tools == {"calls": 0, "errors": 0, "refused": 0}

