"""Tenants' webhook signing secrets encrypted at rest, like channel secrets: the column widens to hold a
Fernet token and every clear ``whsec_`` value is sealed with the deployment's key.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TENANT = sa.table("tenant", sa.column("id", sa.String()), sa.column("webhook_secret", sa.Text()))


def _box() -> Any:
    factory: Callable[[], Any] | None = context.config.attributes.get("secret_box")
    if factory is None:
        raise RuntimeError("sealing the tenants' webhook secrets needs the secret key: migrate through "
                           "`sleuth` (any command) or `storage.db.migrate(engine, secret_box=...)`")
    return factory()


def _reseal(seal: Callable[[Any, str], str], clear: bool) -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(_TENANT.c.id, _TENANT.c.webhook_secret)).all()
    todo = [(row_id, value) for row_id, value in rows if value.startswith("whsec_") == clear]
    if not todo:
        return
    box = _box()
    for row_id, value in todo:
        connection.execute(sa.update(_TENANT).where(_TENANT.c.id == row_id)
                           .values(webhook_secret=seal(box, value)))


def _widen(existing: Any, new: Any) -> None:
    # SQLite ignores a VARCHAR's length, and its batch mode would re-create `tenant`, which the foreign
    # keys of a populated database forbid: only the other dialects change the column.
    if op.get_bind().dialect.name == "sqlite":
        return
    with op.batch_alter_table("tenant") as batch:
        batch.alter_column("webhook_secret", existing_type=existing, type_=new, existing_nullable=False)


def upgrade() -> None:
    _widen(sa.String(length=100), sa.Text())
    _reseal(lambda box, value: str(box.seal_text(value)), clear=True)


def downgrade() -> None:
    _reseal(lambda box, value: str(box.open_text(value)), clear=False)
    _widen(sa.Text(), sa.String(length=100))
