"""Bodies of the longer CLI commands (ingest, ask, up), kept out of the Typer declarations."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from app.intake import Launcher, parse_request, submit_investigation
from bootstrap import Services
from cli import processes, render
from config.settings import Settings
from investigation.errors import ValidationFailed

if TYPE_CHECKING:
    from celery import Celery

    from storage.models import Tenant


def run_ingest(settings: Settings, paths: Sequence[Path], tenant_name: str, *,
               console: Console | None = None, force: bool = False) -> dict[str, Any]:
    """Index documents for a tenant. Documents whose content is unchanged since the last ingest (see
    `cli.manifest`) are not written again and are reported as `unchanged`."""
    from adapters.search.ingest import load_documents
    from app.corpus import ingest_documents
    from cli import manifest, progress
    from storage import repositories as repo

    services = Services(settings)
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=tenant_name)
        tenant_id = tenant.id
    documents = load_documents(list(paths))
    backends = list(services.backends.values())
    path = manifest.path_for(settings.index_dir, tenant_id, list(services.backends))
    known = {} if force else manifest.load(path)
    split = manifest.plan(
        documents, known, [b.count(tenant_id) for b in backends], settings.engines.chunk_tokens
    )
    started = time.perf_counter()
    result: dict[str, Any] = {"tenant": tenant_name, "documents": len(documents), "new": len(split.new),
                              "changed": len(split.changed), "unchanged": len(split.unchanged),
                              "chunks_written": 0, "chunks_replaced": 0}
    if split.to_write:
        with progress.bar(console, "indexing chunks") as update:
            # Raises the tenant's corpus version in the database: every cached search result built before
            # is retired, whichever Redis holds it and whether or not one is running now.
            report = ingest_documents(services, split.to_write, tenant_id=tenant_id, progress=update)
        result.update(chunks_written=report.chunks, chunks_replaced=report.removed,
                      backend_seconds=report.backend_seconds)
    hashes = dict(known.get("documents", {})) if split.trusted else {}
    hashes.update({d.id: manifest.doc_hash(d, settings.engines.chunk_tokens) for d in documents})
    manifest.save(path, hashes, backends[0].count(tenant_id) if backends else 0)
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def ingest_summary(report: dict[str, Any]) -> str:
    """One human line for an ingest report."""
    parts = [(f"{report['documents']} documents for {report['tenant']}: {report['new']} new, "
              f"{report['changed']} changed, {report['unchanged']} unchanged")]
    if report["chunks_written"]:
        parts.append(f"{report['chunks_written']} chunks written in {report['seconds']:.1f}s")
    else:
        parts.append("nothing to index")
    return "; ".join(parts)


_APPS: dict[tuple[str, str, str], Celery] = {}


def celery_for(settings: Settings) -> Celery:
    """One Celery app per (Redis, prefix, broker) in this process: apps hold connection pools."""
    from workers.app import create_celery

    key = (settings.redis_url or "", settings.redis_prefix, settings.broker_url or "")
    if key not in _APPS:
        _APPS[key] = create_celery(settings)
    return _APPS[key]


def create_and_launch(
    services: Services,
    tenant_name: str,
    question: str,
    mode: str,
    callback: dict[str, Any] | list[dict[str, Any]] | None = None,
    *,
    audience: str = "agent",
    launch: Launcher | None = None,
    context: dict[str, Any] | None = None,
    tenant: Tenant | None = None,
    in_process: bool = False,
) -> str:
    """Submit a question for a tenant named on the command line (the same intake as the API). `tenant`: that
    tenant's row, when the caller read it already (a bench asks many questions of one tenant). `in_process`:
    `launch` runs the investigation to its end in this process (`submit_investigation`)."""
    from storage import repositories as repo

    request = parse_request({"question": question, "mode": mode, "callback": callback, "audience": audience,
                             "context": context})
    if tenant is None or tenant.name != tenant_name:
        with services.session() as session:
            tenant = repo.get_tenant_by_name(session, name=tenant_name)
    if launch is None:
        from tasks import workflow  # Celery's canvas: not imported by a run that launches in-process

        app = celery_for(services.settings)

        def launch(inv_id: str) -> None:
            workflow.launch(app, inv_id)

    # An operator's own runs (ask, bench) are not rate limited; fairness still applies.
    return submit_investigation(services, tenant=tenant, request=request, launch=launch, rate_limit=False,
                                in_process=in_process).id


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
            console: Console, audience: str = "agent", executor: str = "auto") -> int:
    """Answer one question. `auto`: through the queue when a broker or a `sleuth up` is there, else
    the same steps in this process (no worker to start: answers in about a second); `queue` starts an
    embedded Redis and a worker for the call when nothing runs."""
    if executor not in ("auto", "queue", "inline"):
        raise ValidationFailed("executor", "must be auto, queue or inline")
    live = processes.existing_redis(settings)
    if executor == "inline" or (executor == "auto" and live is None):
        if not as_json:
            console.print("[dim]no broker and no `sleuth up` running: running the steps in this process "
                          "(start `sleuth up`, or pass --executor queue, to go through Celery)[/dim]")
        view = _ask_inline(settings, question, tenant, mode=mode, audience=audience,
                           console=None if as_json else console)
    else:
        with processes.queue_stack(settings) as stack:
            services = Services(stack)
            inv_id = create_and_launch(services, tenant, question, mode, audience=audience)
            if not as_json:
                console.print(f"[bold]investigation {inv_id}[/bold]")
            view = wait_for(services, inv_id, console=None if as_json else console)
    if as_json:
        print(json.dumps(view, indent=2))
    else:
        print(render.answer_block(view))
        print(f"-- {render.trace_summary(view)}")
    return 0 if view["status"] in ("answered", "refused") else 1


def _warm(services: Services) -> None:
    try:
        _ = services.reasoner, services.backends
        from adapters.search.embedder import embed_matrix

        embed_matrix(services.embedder, ["warm up"], persist=False)
    except Exception:  # noqa: BLE001 - the step itself reports any real problem
        return


def _ask_inline(settings: Settings, question: str, tenant: str, *, mode: str, audience: str,
                console: Console | None) -> dict[str, Any]:
    import threading

    from tasks import inline

    with processes.state_redis(settings) as live:
        services = Services(live, one_process=True)
        # Load the reasoner, engines and embedding model while intake migrates and writes: the model's
        # session is built in native code, so this overlaps with the database work.
        warm = threading.Thread(target=_warm, args=(services,), daemon=True)
        warm.start()
        inv_id = create_and_launch(services, tenant, question, mode, audience=audience,
                                   launch=lambda i: inline.run(services, i), in_process=True)
        if console is not None:
            console.print(f"[bold]investigation {inv_id}[/bold]")
        view = wait_for(services, inv_id, console=console, timeout=5)
        # Never exit while the model is still loading in native code (onnxruntime aborts the process).
        warm.join()
        return view


__all__ = ["celery_for", "create_and_launch", "ingest_summary", "run_ask", "run_ingest", "wait_for"]
