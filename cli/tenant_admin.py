"""`sleuth tenants update --retention-days` and `sleuth tenants remove`: a tenant's retention, and its removal
with everything it left (rows, Redis state, index entries)."""

from __future__ import annotations

import json

from rich.console import Console

from config.settings import Settings
from investigation.errors import PermanentError, ValidationFailed


def set_retention(settings: Settings, *, tenant: str, days: int, as_json: bool) -> None:
    from bootstrap import Services
    from storage import _tenants as repo

    with Services(settings).session() as session:
        found = repo.get_tenant_by_name(session, name=tenant)
        updated = repo.update_limits(session, tenant_id=found.id, changes={"retention_days": days})
    if as_json:
        print(json.dumps({"name": tenant, "retention_days": updated.limits["retention_days"]}))
    else:
        print(f"tenant {tenant}: trace events and evidence text kept {days} day(s)")


def remove(settings: Settings, *, tenant: str, confirm: bool, as_json: bool, console: Console) -> None:
    """Remove `tenant` and everything of it; refuses without `confirm`. Needs the deployment's Redis (the
    configured one, or the embedded one of a running `sleuth up`)."""
    from app.tenant_removal import remove_tenant
    from bootstrap import Services
    from cli.processes import running_stack
    from storage import repositories as repo

    if not confirm:
        raise ValidationFailed(
            "confirm",
            f"removing tenant {tenant!r} deletes its investigations, documents and "
            "settings for good: pass --confirm",
        )
    redis_url = settings.redis_url or str((running_stack(settings) or {}).get("redis_url") or "")
    if not redis_url:
        raise PermanentError("removing a tenant needs its Redis: set SLEUTH_REDIS_URL or start `sleuth up`")
    services = Services(settings.model_copy(update={"redis_url": redis_url}))
    with services.session() as session:
        tenant_id = repo.get_tenant_by_name(session, name=tenant).id
    done = remove_tenant(services, tenant_id)
    if as_json:
        print(json.dumps({"name": tenant, **done.as_json()}))
        return
    rows = sum(done.rows.values())
    console.print(
        f"tenant {tenant} removed: {rows} row(s) in {len(done.rows)} table(s), {done.redis_keys} Redis "
        f"key(s) or member(s), index entries {done.index_entries}"
    )
