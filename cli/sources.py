"""`sleuth sources add|list|sync|remove|faq`: a tenant's knowledge sources (see docs/sources.md)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console

from config.settings import get_settings

sources_app = typer.Typer(no_args_is_help=True, help="Knowledge sources synced on a schedule: help centers, "
                          "solved tickets, folders, docs sites.")
_console = Console(stderr=True, soft_wrap=True)
Tenant = Annotated[str, typer.Option(help="Tenant name")]
AsJson = Annotated[bool, typer.Option("--json")]


def _services_and_tenant(tenant: str) -> tuple[Any, Any]:
    from bootstrap import Services
    from storage import repositories as repo

    services = Services(get_settings())
    with services.session() as session:
        return services, repo.get_tenant_by_name(session, name=tenant)


def _line(view: dict[str, Any]) -> str:
    stats = view["last_stats"]
    counts = ", ".join(
        f"{stats.get(k, 0)} {k}" for k in ("added", "updated", "deleted", "unchanged", "skipped")
    )
    last = view["last_finished_at"] or "never"
    state = " (syncing)" if view["running"] else ""
    error = f"; last error: {view['last_error']}" if view["last_error"] else ""
    return (f"{view['name']}  {view['type']}  every {view['every_seconds'] // 60}m  {view['items']} items  "
            f"last sync {last}{state}: {counts}{error}")


@sources_app.command("add")
def sources_add(
    name: str,
    tenant: Tenant,
    type: Annotated[
        str,
        typer.Option(
            "--type",
            help="zendesk-guide, freshdesk-solutions, zendesk-tickets, freshdesk-tickets, folder or sitemap",
        ),
    ],
    channel: Annotated[str | None, typer.Option(help="The tenant's helpdesk channel (credentials)")] = None,
    locale: Annotated[str | None, typer.Option(help="Zendesk Guide: one locale, e.g. en-us")] = None,
    every: Annotated[str, typer.Option(help="Sync interval, e.g. 15m, 1h")] = "15m",
    status: Annotated[
        list[str] | None, typer.Option(help="Tickets: solved/closed (resolved for Freshdesk); repeatable")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Tickets: how far back, e.g. 90d")] = None,
    path: Annotated[str | None, typer.Option(help="Folder: the directory")] = None,
    url: Annotated[str | None, typer.Option(help="Sitemap: https://…/sitemap.xml")] = None,
    as_json: AsJson = False,
) -> None:
    """Declare a source for TENANT; it syncs every --every on the workers' `sources` queue."""
    from app.sources import add_source

    services, owner = _services_and_tenant(tenant)
    data = {
        "name": name,
        "type": type,
        "channel": channel,
        "locale": locale,
        "every": every,
        "status": status,
        "since": since,
        "path": path,
        "url": url,
    }
    view = add_source(services, tenant=owner, data={k: v for k, v in data.items() if v is not None})
    print(json.dumps(view) if as_json else f"added source {view['name']} ({view['type']}) for {tenant}")


@sources_app.command("list")
def sources_list(tenant: Tenant, as_json: AsJson = False) -> None:
    """The tenant's sources with their last sync: items, added/updated/deleted/unchanged/skipped, last
    error."""
    from app.sources import list_sources

    services, owner = _services_and_tenant(tenant)
    views = list_sources(services, tenant=owner)
    if as_json:
        print(json.dumps(views))
        return
    for view in views:
        print(_line(view))
    if not views:
        print(f"no sources for {tenant} (add one: sleuth sources add NAME --tenant {tenant} --type …)")


@sources_app.command("sync")
def sources_sync(
    name: str,
    tenant: Tenant,
    full: Annotated[
        bool, typer.Option("--full", help="Read everything again and remove what the source no longer lists")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Sync NAME now, in this process (a progress line on a terminal); prints the result."""
    from app.source_sync import run_inline
    from app.sources import get_source, view
    from cli import progress

    services, owner = _services_and_tenant(tenant)
    source = get_source(services, tenant=owner, name=name)
    with progress.bar(_console, f"syncing {name}") as update:
        def report(totals: dict[str, int]) -> None:
            done = sum(totals.values())
            update(done, done)

        ended = run_inline(services, source.id, full=full, progress=report)
    if ended.type in ("zendesk-tickets", "freshdesk-tickets") and not ended.last_error:
        from app.sources import refresh_faq

        refresh_faq(services, ended)
    out = view(ended)
    print(json.dumps(out) if as_json else _line(out))
    if out["last_error"]:
        raise typer.Exit(1)


@sources_app.command("remove")
def sources_remove(name: str, tenant: Tenant, as_json: AsJson = False) -> None:
    """Remove NAME and every document it put in the engines."""
    from app.sources import remove_source

    services, owner = _services_and_tenant(tenant)
    removed = remove_source(services, tenant=owner, name=name)
    print(json.dumps({"removed": name, "documents": removed}) if as_json
          else f"removed source {name} and its {removed} documents from every engine")


@sources_app.command("faq")
def sources_faq(
    tenant: Tenant,
    approve: Annotated[str | None, typer.Option(help="Publish this candidate as a public document")] = None,
    as_json: AsJson = False,
) -> None:
    """FAQ candidates grouped from solved tickets; --approve ID publishes one (nothing else from tickets
    reaches a customer's answer)."""
    from app.sources import approve_faq, list_faq

    services, owner = _services_and_tenant(tenant)
    if approve:
        out = approve_faq(services, tenant=owner, faq_id=approve)
        print(json.dumps(out) if as_json else f"published FAQ {out['id']}: {out['question']}")
        return
    views = list_faq(services, tenant=owner)
    if as_json:
        print(json.dumps(views))
        return
    for v in views:
        print(f"{v['id']}  {v['status']}  {v['tickets']} tickets  {v['question']}")
    if not views:
        print("no FAQ candidates yet (they come from recurring resolutions of solved tickets)")
