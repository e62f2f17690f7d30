"""`sleuth tools add|list|remove`: a tenant's declared HTTP tools (see docs/tools.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from config.settings import get_settings

tools_app = typer.Typer(
    no_args_is_help=True, help="Declare the HTTP tools a tenant's investigations may call."
)


def _secret(secret_file: Path | None) -> str | None:
    if secret_file is None:
        return None
    text = sys.stdin.read() if str(secret_file) == "-" else secret_file.read_text(encoding="utf-8")
    return text.strip()


@tools_app.command("add")
def tools_add(
    file: Path,
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    operation: Annotated[
        str | None, typer.Option(help="FILE is an OpenAPI document: import this operationId as a tool")
    ] = None,
    secret_file: Annotated[
        Path | None,
        typer.Option(help="File holding the tool's secret ('-' reads stdin); stored encrypted, never shown"),
    ] = None,
    owner_check: Annotated[
        str | None,
        typer.Option(
            "--owner",
            help="FIELD=context.NAME: whose record a result is (e.g. order.customer_id=context.account_id); "
            "sets `owner` on every declaration read, e.g. an imported OpenAPI operation",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Validate and store the tool declaration(s) in FILE (YAML or JSON) for TENANT."""
    from adapters.tools.registry import read_file, register, tool_view
    from bootstrap import Services
    from storage import repositories as repo

    settings = get_settings()
    raws = read_file(file, operation=operation)
    if owner_check is not None:
        field, sep, equals = owner_check.partition("=")
        if not sep or not field.strip() or not equals.strip():
            raise typer.BadParameter("FIELD=context.NAME, e.g. order.customer_id=context.account_id",
                                     param_hint="--owner")
        raws = [{**raw, "owner": {"field": field.strip(), "equals": equals.strip()}} for raw in raws]
    secret = _secret(secret_file)
    if secret is not None and len(raws) > 1:
        raise typer.BadParameter("--secret-file applies to one tool: put one declaration per file")
    services = Services(settings)
    with services.session() as session:
        owner = repo.get_tenant_by_name(session, name=tenant)
        out = []
        for raw in raws:
            record, created = register(session, settings, tenant=owner, raw=raw, secret=secret)
            out.append({**tool_view(record), "created": created})
    if as_json:
        print(json.dumps(out))
        return
    for view in out:
        verb = "added" if view["created"] else "updated"
        print(f"{verb} tool {view['name']} for {tenant} (secret: {'set' if view['has_secret'] else 'none'})")


@tools_app.command("list")
def tools_list(tenant: Annotated[str, typer.Option(help="Tenant name")],
               as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The tenant's tools (declarations; secrets are never shown)."""
    from adapters.tools.registry import tool_view
    from bootstrap import Services
    from storage import repositories as repo

    with Services(get_settings()).session() as session:
        owner = repo.get_tenant_by_name(session, name=tenant)
        views = [tool_view(r) for r in repo.list_tools(session, tenant_id=owner.id)]
    if as_json:
        print(json.dumps(views))
        return
    for view in views:
        decl = view["declaration"]
        policy = decl.get("policy", {})
        print(
            f"{view['name']:<20} {decl['method']} {decl['url']}  "
            f"audiences={','.join(policy.get('audiences', []))}"
            f"  secret={'set' if view['has_secret'] else 'none'}"
        )


@tools_app.command("remove")
def tools_remove(name: str, tenant: Annotated[str, typer.Option(help="Tenant name")]) -> None:
    """Remove one tool of the tenant."""
    from bootstrap import Services
    from storage import repositories as repo

    with Services(get_settings()).session() as session:
        owner = repo.get_tenant_by_name(session, name=tenant)
        repo.remove_tool(session, tenant_id=owner.id, name=name)
    print(f"removed tool {name} of {tenant}")


@tools_app.command("bench")
def tools_bench(
    labelled: Annotated[Path, typer.Option(help="Labelled tool questions (JSONL)")] = Path(
        "examples/tools/labelled.jsonl"
    ),
    adversarial: Annotated[Path, typer.Option(help="Adversarial cases (JSONL)")] = Path(
        "examples/tools/adversarial.jsonl"
    ),
    out: Annotated[Path | None, typer.Option(help="One JSON line per case")] = None,
    split: Annotated[
        str | None, typer.Option(help="dev | test: one frozen half of each set (cli/splits.py)")
    ] = None,
    domain: Annotated[
        str,
        typer.Option(
            help="saas (account/billing, status, tickets) | shop (orders, subscription) | travel (bookings, "
                 "trips, "
            "loyalty, flight status)"
        ),
    ] = "saas",
) -> None:
    """Tool figures on local sample APIs: correct tool-backed answers, calls per investigation, added
    latency (p95), calls outside policy on the adversarial set."""
    from rich.console import Console

    from cli.tools_bench import DOMAINS, run_tools_bench

    if domain not in DOMAINS:
        raise typer.BadParameter(f"one of {', '.join(DOMAINS)}", param_hint="--domain")

    run_tools_bench(get_settings(), labelled=labelled, adversarial=adversarial, out=out,
                    console=Console(stderr=True), split=split, domain=domain)
