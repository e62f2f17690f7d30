"""`sleuth gaps`: the questions the knowledge base could not answer (refused, rated wrong or partly), grouped
by topic with counts, trend and the investigations (docs/feedback.md, "Knowledge gaps")."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from config.settings import get_settings
from investigation.errors import NotFound, ValidationFailed

if TYPE_CHECKING:
    from sqlmodel import Session

console = Console(stderr=True, soft_wrap=True)


def tenant_id_of(session: Session, name: str) -> str:
    """The id of the tenant named `name`; an unknown name is refused naming --tenant."""
    from storage import repositories as repo

    try:
        return repo.get_tenant_by_name(session, name=name).id
    except NotFound:
        raise ValidationFailed("--tenant", f"no tenant named {name!r}") from None


def gaps(
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    since: Annotated[
        str, typer.Option(help="The period: 30d, 12h, 2w (compared with the one before)")
    ] = "30d",
    as_json: Annotated[bool, typer.Option("--json", help="The whole report as JSON")] = False,
    threshold: Annotated[
        float, typer.Option(help="Cosine at or above which two questions share a topic", min=0.0, max=1.0)
    ] = 0.45,
    limit: Annotated[int, typer.Option(help="Group at most the newest N questions", min=1)] = 100_000,
    show: Annotated[int, typer.Option(help="Investigations listed per group (text output)", min=0)] = 3,
) -> None:
    """The questions that were refused, rated wrong or answered partly, grouped by topic: what to write
    next."""
    from app.gaps import knowledge_gaps, parse_since
    from bootstrap import Services
    from storage.models import utcnow

    span = parse_since(since)
    services = Services(get_settings())
    until = utcnow()
    with services.session() as session:
        tenant_id = tenant_id_of(session, tenant)
        report = knowledge_gaps(
            session,
            services.embedder,
            tenant_id=tenant_id,
            since=until - span,
            until=until,
            threshold=threshold,
            limit=limit,
        )
    if as_json:
        print(json.dumps({"tenant": tenant, **report.as_json()}, ensure_ascii=False))
        return
    print(
        f"Knowledge gaps of {tenant}, {report.since:%Y-%m-%d %H:%M} to {report.until:%Y-%m-%d %H:%M} UTC: "
        f"{report.questions} questions refused, rated wrong or partly ({report.previous} in the {since} "
        "before), "
        f"{len(report.gaps)} topics"
    )
    if report.truncated:
        print(f"(only the newest {limit} questions were grouped: --limit)")
    for gap in report.gaps:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(gap.reasons.items()))
        print(f"\n{gap.count:>5}  {gap.trend:>5}  {gap.label.question}")
        print(f"             terms: {', '.join(gap.terms) or '-'}; {reasons}")
        for q in gap.questions[:show]:
            print(f"             {q.id}  {q.created_at:%Y-%m-%d}  {q.reason:<7}  {q.question[:80]}")
