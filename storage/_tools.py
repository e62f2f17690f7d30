"""Tenants' declared tools: put (create or replace), list, get, remove. The secret arrives sealed."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import Table, bindparam, delete
from sqlmodel import Session, col, select

from investigation.errors import NotFound
from storage._common import write
from storage._prepared import Prepared, load
from storage.models import ToolRecord, utcnow


def _revision(declaration: dict[str, Any], secret: str) -> str:
    material = json.dumps([declaration, hashlib.sha256(secret.encode()).hexdigest()], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def put_tool(session: Session, *, tenant_id: str, name: str, declaration: dict[str, Any],
             sealed_secret: str | None) -> tuple[ToolRecord, bool]:
    """Create the tool, or replace its declaration (and its secret when one is given); (record, created)."""
    with write(session):
        found = session.exec(select(ToolRecord).where(ToolRecord.tenant_id == tenant_id,
                                                      ToolRecord.name == name)).first()
        if found is None:
            secret = sealed_secret or ""
            record = ToolRecord(tenant_id=tenant_id, name=name, declaration=declaration, secret=secret,
                                revision=_revision(declaration, secret))
            session.add(record)
            session.flush()
            return record, True
        if sealed_secret is not None:
            found.secret = sealed_secret
        found.declaration = declaration
        found.revision = _revision(declaration, found.secret)
        found.updated_at = utcnow()
        session.add(found)
        session.flush()
        return found, False


# Read when every hop is planned: the statement is built once, not per call.
_TOOLS: Table = ToolRecord.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_TOOLS_OF = Prepared(
    select(*_TOOLS.c).where(_TOOLS.c.tenant_id == bindparam("tenant_id")).order_by(_TOOLS.c.name)
)


def list_tools(session: Session, *, tenant_id: str) -> list[ToolRecord]:
    return load(session, ToolRecord, _TOOLS_OF, {"tenant_id": tenant_id})


def get_tool(session: Session, *, tenant_id: str, name: str) -> ToolRecord:
    found = session.exec(select(ToolRecord).where(ToolRecord.tenant_id == tenant_id,
                                                  ToolRecord.name == name)).first()
    if found is None:
        raise NotFound(f"tool {name!r} not found")
    return found


def remove_tool(session: Session, *, tenant_id: str, name: str) -> None:
    with write(session):
        result = session.execute(delete(ToolRecord).where(col(ToolRecord.tenant_id) == tenant_id,
                                                          col(ToolRecord.name) == name))
        if not result.rowcount:  # type: ignore[attr-defined]  # an UPDATE gives a CursorResult; stubs say Result
            raise NotFound(f"tool {name!r} not found")
