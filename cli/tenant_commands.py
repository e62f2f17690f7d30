"""`sleuth tenants` and `sleuth channels`: tenants, their keys, limits and retention, and the delivery
channels of each."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from config.settings import Settings, get_settings
from investigation.errors import ValidationFailed

tenants_app = typer.Typer(no_args_is_help=True, help="Create and list tenants.")
channels_app = typer.Typer(
    no_args_is_help=True, help="Delivery channels of a tenant: smtp, zendesk, freshdesk."
)
console = Console(stderr=True, soft_wrap=True)  # piped output: no wrapping mid-phrase


def _settings() -> Settings:
    return get_settings()


@tenants_app.command("create")
def tenants_create(name: str, as_json: Annotated[bool, typer.Option("--json")] = False,
                   limit: Annotated[list[str] | None, typer.Option(
                       help="KEY=N cap, repeatable: max_hops, max_retrieval_calls, max_llm_tokens, "
                            "deadline_seconds, llm_tokens_per_day")] = None) -> None:
    """Create a tenant; prints its id, API key (shown once) and webhook signing secret."""
    from bootstrap import Services
    from storage import repositories as repo

    limits: dict[str, object] = {}
    for item in limit or []:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise ValidationFailed("limit", f"{item!r} is not KEY=N")
        limits[key.strip()] = int(value)
    services = Services(_settings())
    box = services.secret_box()
    with services.session() as session:
        tenant, key = repo.create_tenant(session, name=name, box=box, limits=limits)
        out = {"id": tenant.id, "name": tenant.name, "api_key": key,
               "webhook_secret": repo.open_webhook_secret(tenant, box)}
    if as_json:
        print(json.dumps(out))
    else:
        print(f"tenant id:       {out['id']}\napi key:         {key}   (shown once; stored hashed)\n"
              f"webhook secret:  {out['webhook_secret']}")


@tenants_app.command("list")
def tenants_list() -> None:
    from bootstrap import Services
    from storage import repositories as repo

    with Services(_settings()).session() as session:
        for t in repo.list_tenants(session):
            print(f"{t.id}  {t.name}  key {t.api_key_prefix}…")


@tenants_app.command("rotate-key")
def tenants_rotate_key(name: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """A new API key for the tenant (shown once); the old key, its console sessions and links stop working."""
    from cli.tenant_keys import rotate_key

    rotate_key(_settings(), tenant=name, as_json=as_json, console=console)


@tenants_app.command("update")
def tenants_update(
    name: str,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Open a host (name or address) for this tenant's deliveries although it is "
            "private/loopback; repeatable"
        ),
    ] = None,
    remove_host: Annotated[list[str] | None, typer.Option(help="Close a host again; repeatable")] = None,
    retention_days: Annotated[
        int | None,
        typer.Option(help="Days its trace events and evidence text are kept (answers and citations stay)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Change a tenant: its outbound allowlist, its retention."""
    from cli.channels import update_tenant
    from cli.tenant_admin import set_retention

    if retention_days is not None:
        set_retention(_settings(), tenant=name, days=retention_days, as_json=as_json)
    if allow_host or remove_host or retention_days is None:
        update_tenant(
            _settings(), tenant=name, allow=allow_host or [], disallow=remove_host or [], as_json=as_json
        )


@tenants_app.command("remove")
def tenants_remove(
    name: str,
    confirm: Annotated[bool, typer.Option("--confirm", help="Yes, remove it for good")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Remove a tenant and everything of it: rows in every table, Redis state, index entries in every
    engine."""
    from cli.tenant_admin import remove

    remove(_settings(), tenant=name, confirm=confirm, as_json=as_json, console=console)


_SECRET_HELP = "name of the environment variable holding it, or - for stdin"


@channels_app.command("add")
def channels_add(
    name: str,
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    type_: Annotated[str, typer.Option("--type", help="smtp | zendesk | freshdesk")],
    host: Annotated[str | None, typer.Option(help="smtp: relay host")] = None,
    port: Annotated[int | None, typer.Option(help="smtp: relay port (default 587)")] = None,
    username: Annotated[str | None, typer.Option(help="smtp: AUTH user")] = None,
    password_env: Annotated[str | None, typer.Option(help=f"smtp: AUTH password, {_SECRET_HELP}")] = None,
    starttls: Annotated[bool, typer.Option("--starttls", help="smtp: upgrade with STARTTLS")] = False,
    ssl: Annotated[bool, typer.Option("--ssl", help="smtp: implicit TLS (port 465)")] = False,
    from_: Annotated[str | None, typer.Option("--from", help="smtp: sender address")] = None,
    subdomain: Annotated[str | None, typer.Option(help="zendesk: SUBDOMAIN.zendesk.com")] = None,
    email: Annotated[str | None, typer.Option(help="zendesk: the API user's e-mail")] = None,
    token_env: Annotated[str | None, typer.Option(help=f"zendesk: API token, {_SECRET_HELP}")] = None,
    signing_secret_env: Annotated[str | None, typer.Option(
        help=f"zendesk: webhook signing secret (inbound hooks), {_SECRET_HELP}")] = None,
    domain: Annotated[str | None, typer.Option(help="freshdesk: acme.freshdesk.com (or acme)")] = None,
    api_key_env: Annotated[str | None, typer.Option(help=f"freshdesk: API key, {_SECRET_HELP}")] = None,
    inbound_secret_env: Annotated[str | None, typer.Option(
        help=f"freshdesk: X-Sleuth-Secret of inbound hooks, {_SECRET_HELP}")] = None,
    base_url: Annotated[str | None, typer.Option(help="helpdesks: self-hosted proxy or test server")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Add a delivery channel; secrets come from environment variables (or stdin), never from flags."""
    from cli.channels import add, read_secret

    fields = {"type": type_, "host": host, "port": port, "username": username,
              "password": read_secret("password_env", password_env), "starttls": starttls or None,
              "ssl": ssl or None, "from": from_, "subdomain": subdomain, "email": email,
              "token": read_secret("token_env", token_env),
              "signing_secret": read_secret("signing_secret_env", signing_secret_env), "domain": domain,
              "api_key": read_secret("api_key_env", api_key_env),
              "inbound_secret": read_secret("inbound_secret_env", inbound_secret_env), "base_url": base_url}
    add(_settings(), name=name, tenant=tenant, fields=fields, as_json=as_json)


@channels_app.command("list")
def channels_list(tenant: Annotated[str, typer.Option(help="Tenant name")],
                  as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The tenant's channels (secrets masked)."""
    from cli.channels import list_

    list_(_settings(), tenant=tenant, as_json=as_json)


@channels_app.command("remove")
def channels_remove(name: str, tenant: Annotated[str, typer.Option(help="Tenant name")]) -> None:
    """Remove a channel; pending deliveries to it end dead."""
    from cli.channels import remove

    remove(_settings(), name=name, tenant=tenant)
