"""`sleuth channels add|list|remove` and `sleuth tenants update --allow-host`: bodies of the commands.

Secrets are never flag values: a flag names the environment variable holding the secret, or is ``-``
to read it from stdin. (Reading a variable the operator named on the command line is the one place
outside `Settings` that looks at the environment, by design.)
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from bootstrap import Services
from config.settings import Settings
from investigation.errors import ValidationFailed


def read_secret(flag: str, variable: str | None) -> str | None:
    """The secret named by `--{flag} VAR` (or read from stdin with ``-``)."""
    if variable is None:
        return None
    if variable == "-":
        value = sys.stdin.readline().rstrip("\n")
    else:
        value = os.environ.get(variable, "")
        if not value:
            raise ValidationFailed(flag, f"environment variable {variable} is not set or empty")
    if not value:
        raise ValidationFailed(flag, "empty secret on stdin")
    return value


def _tenant(services: Services, name: str) -> Any:
    from storage import repositories as repo

    with services.session() as session:
        return repo.get_tenant_by_name(session, name=name)


def add(settings: Settings, *, name: str, tenant: str, fields: dict[str, Any], as_json: bool) -> None:
    from app.channels import add_channel

    services = Services(settings)
    data = {"name": name, **{k: v for k, v in fields.items() if v is not None}}
    out = add_channel(services, tenant=_tenant(services, tenant), data=data)
    if as_json:
        print(json.dumps(out))
        return
    print(f"channel {out['name']} ({out['type']}) added: id {out['id']}")
    if "inbound_url" in out:
        print(f"inbound hook: {out['inbound_url']}   (configure it in the helpdesk; see docs/helpdesks.md)")


def list_(settings: Settings, *, tenant: str, as_json: bool) -> None:
    from app.channels import list_channels

    services = Services(settings)
    found = list_channels(services, tenant=_tenant(services, tenant))
    if as_json:
        print(json.dumps(found))
        return
    for c in found:
        where = c.get("host") or c.get("base_url") or ""
        hook = f"  hook {c['inbound_url']}" if "inbound_url" in c else ""
        secrets = ",".join(sorted(c.get("secrets") or {})) or "-"
        print(f"{c['name']:<20} {c['type']:<10} {c['id']}  {where}  secrets: {secrets}{hook}")


def remove(settings: Settings, *, name: str, tenant: str) -> None:
    from app.channels import remove_channel

    services = Services(settings)
    remove_channel(services, tenant=_tenant(services, tenant), name=name)
    print(f"channel {name} removed")


def update_tenant(
    settings: Settings, *, tenant: str, allow: list[str], disallow: list[str], as_json: bool
) -> None:
    from app.channels import update_allowlist

    services = Services(settings)
    hosts = update_allowlist(services, tenant_id=_tenant(services, tenant).id, add=allow, remove=disallow)
    if as_json:
        print(json.dumps({"name": tenant, "allowed_hosts": hosts}))
    else:
        print(f"tenant {tenant}: outbound allowlist {', '.join(hosts) or '(empty)'}")
