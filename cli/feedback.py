"""`sleuth feedback export`: the tenant's rated investigations as a labelled decision set (JSON lines) that
`sleuth bench --decisions` re-runs (docs/feedback.md, "Production as a test set")."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from config.settings import get_settings

feedback_app = typer.Typer(no_args_is_help=True, help="Ratings of answers: export them as a test set.")
console = Console(stderr=True, soft_wrap=True)


@feedback_app.command("export")
def feedback_export(
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    since: Annotated[str, typer.Option(help="Ratings given in this period: 30d, 12h, 2w")] = "30d",
) -> None:
    """Print the rated investigations as decisions.jsonl rows (question, route, audience, expected answer from
    the correction or the helpful answer, cited sources as gold); redirect to a file."""
    from app.feedback_export import export_rated, lines
    from app.gaps import parse_since
    from bootstrap import Services
    from cli.gaps import tenant_id_of
    from storage.models import utcnow

    span = parse_since(since)
    until = utcnow()
    with Services(get_settings()).session() as session:
        exported = export_rated(
            session, tenant_id=tenant_id_of(session, tenant), since=until - span, until=until
        )
    for line in lines(exported):
        print(line)
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(exported.skipped.items()))
    console.print(f"{len(exported.rows)} labelled questions" + (f"; left out: {skipped}" if skipped else ""))
