"""The knowledge-gaps report on the real MiniLM embedder and database (SQLite and PostgreSQL): refused
questions and those rated wrong or partly are grouped by topic, labelled with their most typical question and
terms,
counted in the period and the one before; helpful answers, older questions and other tenants' stay out."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import update
from sqlmodel import col

from app.gaps import knowledge_gaps
from storage import repositories as repo
from storage.models import Investigation, utcnow
from tests.support.stack import Stack, build_stack, with_new_tenant

CSV = ["How do I export invoices to CSV?", "Can I download my invoices as a CSV spreadsheet?",
       "Is there a CSV export for billing invoices?", "Export all our invoices as CSV, please"]
SSO = ["Does Acme support SAML single sign-on with Okta?", "How do I set up Okta SSO?"]
MOBILE = "Is there an iOS app?"


def add(stack: Stack, question: str, *, days_ago: float, status: str = "refused", rating: str | None = None,
        now: datetime | None = None) -> str:
    """A finished investigation of `question` asked `days_ago` days ago, rated `rating` by one agent."""
    when = (now or utcnow()) - timedelta(days=days_ago)
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
        inv, _ = repo.create_investigation(
            session,
            tenant=tenant,
            question=question,
            mode="agentic",
            callback=None,
            budget={},
            idempotency_key=None,
            deadline_seconds=60,
        )
        repo.update_investigation(session, investigation_id=inv.id,
                                  route="out_of_corpus" if status == "refused" else "lookup")
        repo.finish_investigation(
            session,
            investigation_id=inv.id,
            status=status,
            stop_reason="sufficient",
            answer=None if status == "refused" else "Plans are listed on the pricing page [1].",
        )
        session.execute(update(Investigation).where(col(Investigation.id) == inv.id).values(created_at=when))
        session.commit()
        if rating:
            repo.record_feedback(session, tenant_id=stack.tenant_id, investigation_id=inv.id, rater="agent:7",
                                 rating=rating, source="api", now=when + timedelta(hours=1))
    return inv.id


def seed_gaps(stack: Stack) -> dict[str, list[str]]:
    """Three topics in the last 30 days (CSV export ×4, Okta SSO ×2, iOS ×1), some of them the 30 days before,
    and what must stay out: a helpful answer, a question older than both periods."""
    ids: dict[str, list[str]] = {"csv": [], "sso": [], "mobile": [], "out": []}
    for i, q in enumerate(CSV):
        ids["csv"].append(add(stack, q, days_ago=2 + i, status="answered" if i == 3 else "refused",
                              rating="wrong" if i == 3 else None))
    ids["out"].append(add(stack, "Can invoices be exported to CSV?", days_ago=40))  # the period before
    for q in SSO:
        ids["sso"].append(add(stack, q, days_ago=5, status="answered", rating="partly"))
    for q in ("How do I configure SSO with Okta?", "Okta SAML setup", "Single sign-on with Okta: how?"):
        add(stack, q, days_ago=45)
    ids["mobile"].append(add(stack, MOBILE, days_ago=1))
    ids["out"].append(add(stack, "Which plan includes SSO?", days_ago=3, status="answered", rating="helpful"))
    ids["out"].append(add(stack, "Is there an Android app?", days_ago=90))  # before both periods
    return ids


def test_gap_questions_are_grouped_labelled_and_counted(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                        db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    ids = seed_gaps(stack)
    add(with_new_tenant(stack), "How do I export invoices to CSV?", days_ago=1)  # another tenant's
    until = utcnow()
    with stack.services.session() as session:
        report = knowledge_gaps(session, stack.services.embedder, tenant_id=stack.tenant_id,
                                since=until - timedelta(days=30), until=until)
    assert (report.questions, report.previous) == (7, 4)
    assert [(g.count, g.previous) for g in report.gaps] == [(4, 1), (2, 3), (1, 0)]
    csv, sso, mobile = report.gaps
    assert csv.label.question in CSV and {"csv", "invoices"} <= set(csv.terms)
    assert [q.id for q in csv.questions] == ids["csv"]  # newest first
    assert csv.reasons == {"refused": 3, "wrong": 1} and csv.trend == "+3"
    assert sso.label.question in SSO and "okta" in sso.terms and sso.reasons == {"partly": 2}
    assert sso.trend == "-1"
    assert mobile.label.question == MOBILE and mobile.trend == "new"
    seen = {q.id for g in report.gaps for q in g.questions}
    assert not seen & set(ids["out"])
    with stack.services.session() as session:
        again = knowledge_gaps(session, stack.services.embedder, tenant_id=stack.tenant_id,
                               since=until - timedelta(days=30), until=until)
    assert again.as_json() == report.as_json()  # deterministic


def test_no_gap_questions_give_an_empty_report(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    add(stack, "Which plan includes SSO?", days_ago=3, status="answered", rating="helpful")
    until = utcnow()
    with stack.services.session() as session:
        report = knowledge_gaps(session, stack.services.embedder, tenant_id=stack.tenant_id,
                                since=until - timedelta(days=7), until=until)
    assert (report.questions, report.gaps) == (0, [])
