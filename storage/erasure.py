"""Removing a tenant's rows from every table, found from the models at run time: a table with a `tenant_id`
column is the tenant's by that column, a table without one by a foreign key to a table that is (evidence →
investigation, attempts → delivery, items → source), so a table added later is covered without a list."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, Table, delete, func, select, tuple_
from sqlmodel import Session, SQLModel

from storage._common import write

TENANT_TABLE = "tenant"


@dataclass(frozen=True)
class TenantTable:
    """How to find one tenant's rows in `table`: through `column` pointing at `parent` (None: `tenant_id`)."""

    table: Table
    column: str
    parent: TenantTable | None = None

    def owned(self, tenant_id: str) -> ColumnElement[bool]:
        """The WHERE clause selecting `tenant_id`'s rows of this table."""
        if self.parent is None:
            return self.table.c[self.column] == tenant_id
        parent = self.parent.table
        keys = select(next(iter(parent.primary_key.columns))).where(self.parent.owned(tenant_id))
        return self.table.c[self.column].in_(keys)


def tenant_tables() -> list[TenantTable]:
    """Every table holding a tenant's rows, children before parents (the order removal takes), the tenant
    table itself last. A table with `tenant_id` is found by it even when it also has foreign keys; one
    without takes its first foreign key (by column name) to a tenant's table."""
    tables = SQLModel.metadata.sorted_tables  # parents before children
    found: dict[str, TenantTable] = {}
    for table in tables:
        if table.name == TENANT_TABLE:
            continue
        if "tenant_id" in table.c:
            found[table.name] = TenantTable(table, "tenant_id")
            continue
        for fk in sorted(table.foreign_keys, key=lambda f: f.parent.name):
            parent = found.get(fk.column.table.name)
            if parent is not None and len(fk.column.table.primary_key.columns) == 1:
                found[table.name] = TenantTable(table, fk.parent.name, parent)
                break
    ordered = [found[t.name] for t in reversed(tables) if t.name in found]
    tenant = SQLModel.metadata.tables[TENANT_TABLE]
    return [*ordered, TenantTable(tenant, "id")]


def count_tenant_rows(session: Session, tenant_id: str) -> dict[str, int]:
    """The tenant's rows per table (tables with none left out)."""
    counts = {}
    for entry in tenant_tables():
        n = int(session.execute(select(func.count()).select_from(entry.table).where(entry.owned(tenant_id)))
                .scalar_one())
        if n:
            counts[entry.table.name] = n
    return counts


def delete_tenant_rows(session: Session, tenant_id: str, *, batch: int) -> dict[str, int]:
    """Remove every row of the tenant, `batch` rows per transaction (a big tenant never holds locks long);
    the tenant row goes last, so an interrupted removal is finished by running it again."""
    removed: dict[str, int] = {}
    for entry in tenant_tables():
        keys = list(entry.table.primary_key.columns)
        while True:
            with write(session):
                rows = session.execute(select(*keys).where(entry.owned(tenant_id)).limit(batch)).all()
                if rows:
                    session.execute(delete(entry.table).where(tuple_(*keys).in_([tuple(r) for r in rows])))
            removed[entry.table.name] = removed.get(entry.table.name, 0) + len(rows)
            if len(rows) < batch:
                break
    return {name: n for name, n in removed.items() if n}
