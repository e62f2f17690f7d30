"""Bodies of the longer CLI commands (ingest, ask, up), kept out of the Typer declarations."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from app.intake import Launcher, parse_request, submit_investigation
from bootstrap import Services
from cli import processes, render
from config.settings import Settings


def run_ingest(settings: Settings, paths: Sequence[Path], tenant_name: str, *,
               console: Console | None = None) -> dict[str, Any]:
    from adapters.search.ingest import ingest, load_documents
    from storage import repositories as repo

    services = Services(settings)
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=tenant_name)
        tenant_id = tenant.id
    documents = load_documents(list(paths))
    with Progress(console=console, transient=True, disable=console is None) as bar:
        task = bar.add_task("indexing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = ingest(documents, tenant=tenant_id, backends=list(services.backends.values()),
                        max_words=settings.chunk_tokens, progress=progress)
    _invalidate_cache(settings, tenant_id)
    result = report.model_dump(mode="json") if hasattr(report, "model_dump") else dict(vars(report))
    result["tenant"] = tenant_name
    return result


def _invalidate_cache(settings: Settings, tenant_id: str) -> None:
    """Bump the tenant's corpus version in whatever Redis is live, so cached sub-query hits are dropped."""
    existing = processes.existing_redis(settings)
    if existing is not None:
        Services(existing).state.bump_corpus_version(tenant_id)


_APPS: dict[tuple[str, str], object] = {}


def celery_for(settings: Settings):  # type: ignore[no-untyped-def]
    """One Celery app per (broker, prefix) in this process: apps hold connection pools."""
    from workers.app import create_celery

    key = (settings.redis_url or "", settings.redis_prefix)
    if key not in _APPS:
        _APPS[key] = create_celery(settings)
    return _APPS[key]


def create_and_launch(services: Services, tenant_name: str, question: str, mode: str,
                      callback: dict[str, Any] | None = None, *, audience: str = "agent",
                      launch: Launcher | None = None) -> str:
    """Submit a question for a tenant named on the command line (the same intake as the API)."""
    from storage import repositories as repo
    from tasks import workflow

    request = parse_request({"question": question, "mode": mode, "callback": callback, "audience": audience})
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=tenant_name)
    if launch is None:
        app = celery_for(services.settings)

        def launch(inv_id: str) -> None:
            workflow.launch(app, inv_id)

    # An operator's own runs (ask, bench) are not rate limited; fairness still applies.
    return submit_investigation(services, tenant=tenant, request=request, launch=launch, rate_limit=False).id


def wait_for(services: Services, inv_id: str, *, console: Console | None = None,
             timeout: float = 300.0) -> dict[str, Any]:
    """Poll the trace until the investigation is terminal, printing progress lines as they come."""
    from investigation.state import Status
    from storage import repositories as repo

    after = 0
    deadline = time.monotonic() + timeout
    while True:
        with services.session() as session:
            for event in repo.list_events(session, investigation_id=inv_id, after_id=after):
                after = event.id or after
                line = render.progress_line(repo.event_view(event))
                if line and console is not None:
                    console.print(f"  [dim]{line}[/dim]")
            inv = repo.get_investigation(session, investigation_id=inv_id)
            if Status(inv.status).terminal:
                return repo.investigation_view(session, investigation=inv)
        if time.monotonic() > deadline:
            raise TimeoutError(f"investigation {inv_id} still {inv.status} after {timeout:.0f}s")
        time.sleep(0.1)


def run_ask(settings: Settings, question: str, tenant: str, *, mode: str, as_json: bool,
            console: Console, audience: str = "agent") -> int:
    with processes.queue_stack(settings) as live:
        services = Services(live)
        inv_id = create_and_launch(services, tenant, question, mode, audience=audience)
        console.print(f"[bold]investigation {inv_id}[/bold]")
        view = wait_for(services, inv_id, console=None if as_json else console)
    if as_json:
        print(json.dumps(view, indent=2))
    else:
        print(render.answer_block(view))
        print(f"-- {render.trace_summary(view)}")
    return 0 if view["status"] in ("answered", "refused") else 1


__all__ = ["celery_for", "create_and_launch", "run_ask", "run_ingest", "wait_for"]
