"""A tenant's corpus version: raised after every change to what its engines hold, read when a hop is planned.

It is the database's, not Redis's, so an ingest made while nothing runs (and then an embedded Redis that kept
its data) still retires every cached search result built before it.
"""

from __future__ import annotations

from sqlalchemy import Table, bindparam, update
from sqlalchemy import select as sa_select
from sqlmodel import Session

from storage._common import insert_ignore, write
from storage._prepared import Prepared
from storage.models import CorpusVersion

_TABLE: Table = CorpusVersion.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_READ = Prepared(sa_select(_TABLE.c.version).where(_TABLE.c.tenant_id == bindparam("tenant_id")))


def corpus_version(session: Session, *, tenant_id: str) -> int:
    """The tenant's corpus version (0 before its first ingest)."""
    rows = _READ.rows(session, {"tenant_id": tenant_id})
    return int(rows[0][0]) if rows else 0


def bump_corpus_version(session: Session, *, tenant_id: str) -> int:
    """Raise the tenant's corpus version by one (committed) and return it: every cached result built under an
    earlier version is never served again."""
    with write(session):
        insert_ignore(session, CorpusVersion, [{"tenant_id": tenant_id, "version": 0}], ["tenant_id"])
        session.execute(update(_TABLE).where(_TABLE.c.tenant_id == tenant_id)
                        .values(version=_TABLE.c.version + 1))
        return corpus_version(session, tenant_id=tenant_id)
