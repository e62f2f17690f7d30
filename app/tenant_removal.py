"""Removing a tenant for good: its index entries in every engine, its Redis state, then its rows in every
table
(the tenant row last, so an interrupted removal is finished by running it again)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import col, select

from bootstrap import Services
from investigation.errors import PermanentError
from investigation.ports import TenantErasable
from storage import erasure
from storage.console_sessions import ConsoleSessions
from storage.models import Investigation
from storage.source_models import Source
from storage.tenant_keys import purge_keys

ROW_BATCH = 1000  # rows per transaction while a tenant's tables are emptied


@dataclass
class Removal:
    """What a tenant's removal took away."""

    tenant_id: str
    index_entries: dict[str, int] = field(default_factory=dict)
    redis_keys: int = 0
    rows: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "tenant_id": self.tenant_id,
            "index_entries": self.index_entries,
            "redis_keys": self.redis_keys,
            "rows": self.rows,
        }


def owned_ids(services: Services, tenant_id: str) -> set[str]:
    """The ids Redis keys of the tenant are named by: its own, its investigations' and its sources'."""
    with services.session() as session:
        invs = session.exec(select(Investigation.id).where(col(Investigation.tenant_id) == tenant_id)).all()
        ids = {tenant_id, *invs}
        ids.update(session.exec(select(Source.id).where(col(Source.tenant_id) == tenant_id)).all())
    return ids


def remove_tenant(services: Services, tenant_id: str) -> Removal:
    """Remove everything of `tenant_id`. Every engine must be able to drop a tenant: one that cannot is named
    before anything is removed."""
    engines = {name: e for name, e in services.backends.items() if isinstance(e, TenantErasable)}
    unable = sorted(set(services.backends) - set(engines))
    if unable:
        raise PermanentError(f"search engine(s) {', '.join(unable)} cannot remove a tenant's entries")
    done = Removal(tenant_id)
    ids = owned_ids(services, tenant_id)
    for name, engine in engines.items():
        done.index_entries[name] = engine.delete_tenant(tenant_id)
    # Console sessions are keyed by a digest of their cookie: the tenant's set of them names them.
    done.redis_keys = ConsoleSessions(services.redis, services.settings.redis_prefix).end_tenant(tenant_id)
    done.redis_keys += purge_keys(services.redis, services.settings.redis_prefix, ids)
    with services.session() as session:
        done.rows = erasure.delete_tenant_rows(session, tenant_id, batch=ROW_BATCH)
    return done
