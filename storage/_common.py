"""Helpers shared by the repository modules: the write scope, race-safe inserts, time conversions."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Table, bindparam
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, SQLModel

from storage._prepared import Prepared, load
from storage.db import IMMEDIATE

M = TypeVar("M", bound=SQLModel)

_INSERT_BATCH = 200  # rows per INSERT: well under SQLite's bound-parameter limit


# Key in `Session.info` while a write holds the session's transaction: callbacks to run after its commit.
_PENDING = "sleuth_after_commit"


@contextmanager
def write(session: Session) -> Iterator[None]:
    """One repository write = one committed transaction (rolled back, and re-raised, on error).

    Anything the caller left pending in the session is committed first: on SQLite the write must start
    its own ``BEGIN IMMEDIATE`` transaction (see `storage.db`). Repositories read what they return
    inside this scope, so no transaction (no old SQLite snapshot) is left open after a write.

    Nested (a repository write inside `atomic`, or inside another write) it joins the transaction that
    is open, so several writes commit together. What a write announces (`after_commit`: trace event
    observers) runs after the outermost commit, in order, and not at all on a rollback.
    """
    if _PENDING in session.info:
        yield
        return
    callbacks: list[Callable[[], None]] = []
    with _transaction(session):
        session.info[_PENDING] = callbacks
        try:
            yield
        finally:
            del session.info[_PENDING]
    for callback in callbacks:
        callback()


# A step's state change and its trace events as ONE transaction: all of them or none, events in the order
# they were added, one ``BEGIN IMMEDIATE``/commit instead of one per write. Keep the block to database
# work: on SQLite it holds the write lock.
atomic = write


def after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Run `callback` once the open write has committed (at once when no write is open)."""
    pending: list[Callable[[], None]] | None = session.info.get(_PENDING)
    if pending is None:
        callback()
    else:
        pending.append(callback)


@contextmanager
def _transaction(session: Session) -> Iterator[None]:
    if session.in_transaction():
        session.commit()
    session.connection(execution_options={IMMEDIATE: True})
    try:
        yield
        session.commit()
    except BaseException:
        session.rollback()
        raise


def insert_ignore(
    session: Session, model: type[SQLModel], rows: Sequence[dict[str, Any]], conflict: Sequence[str]
) -> int:
    """INSERT ... ON CONFLICT (`conflict`) DO NOTHING; returns how many rows were inserted.

    Race-safe without exceptions: a concurrent insert of the same key waits for the other transaction
    and then does nothing. Rows with the same columns go in one batch (executemany).
    """
    inserted = 0
    statement = _insert(_dialect(session), model, tuple(conflict), "")
    for start in range(0, len(rows), _INSERT_BATCH):
        batch = rows[start : start + _INSERT_BATCH]
        inserted += statement.count(session, batch[0] if len(batch) == 1 else batch)
    return inserted


def insert_row(session: Session, model: type[M], row: dict[str, Any], conflict: Sequence[str]) -> M | None:
    """INSERT ... ON CONFLICT (`conflict`) DO NOTHING RETURNING the row as written (server defaults
    included), loaded into the session as a read of it would be; None when the row conflicted. One
    statement where an insert and a read of the row were two."""
    rows = load(session, model, _insert(_dialect(session), model, tuple(conflict), "*"), row)
    return rows[0] if rows else None


def insert_new(
    session: Session, model: type[SQLModel], rows: Sequence[dict[str, Any]], conflict: Sequence[str], key: str
) -> set[Any]:
    """Like `insert_ignore` (INSERT ... ON CONFLICT DO NOTHING RETURNING `key`): the `key` values of the rows
    that were new. Rows are inserted in order, as `Prepared` statements: one alone, several in ONE multi-row
    statement per batch (`_insert_rows`; the driver's executemany returns no rows). Several rows must give the
    same columns in the same order (ValueError, nothing sent)."""
    dialect = _dialect(session)
    if len(rows) == 1:
        return {row[0] for row in _insert(dialect, model, tuple(conflict), key).rows(session, rows[0])}
    columns = tuple(rows[0]) if rows else ()
    if any(tuple(row) != columns for row in rows):
        raise ValueError(f"rows to insert into {model.__name__} must all give the same columns, in order")
    new: set[Any] = set()
    for start in range(0, len(rows), _INSERT_BATCH):
        batch = rows[start : start + _INSERT_BATCH]
        statement = _insert_rows(dialect, model, tuple(conflict), key, columns, len(batch))
        params = {f"{column}_{i}": value for i, row in enumerate(batch) for column, value in row.items()}
        new.update(row[0] for row in statement.rows(session, params))
    return new


def _dialect(session: Session) -> str:
    dialect = session.get_bind().dialect.name
    if dialect not in ("postgresql", "sqlite"):
        raise NotImplementedError(f"unsupported database: {dialect}")
    return dialect


@functools.cache
def _insert(dialect: str, model: type[SQLModel], conflict: tuple[str, ...], returning: str) -> Prepared:
    """The dialect's INSERT ... ON CONFLICT (`conflict`) DO NOTHING, built once per shape and reused (a
    statement is immutable; building one and its cache key cost more than running it on SQLite). Core, on the
    table; `returning`: the column it returns ("": none, run for its row count; "*": every column, the
    row)."""
    table: Table = model.__table__  # type: ignore[attr-defined]  # SQLModel sets it, undeclared
    stmt = (
        postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)
    ).on_conflict_do_nothing(index_elements=list(conflict))
    if returning == "*":
        return Prepared(stmt.returning(*table.c))
    return Prepared(stmt.returning(table.c[returning]) if returning else stmt)


@functools.cache
def _insert_rows(dialect: str, model: type[SQLModel], conflict: tuple[str, ...], returning: str,
                 columns: tuple[str, ...], count: int) -> Prepared:
    """`_insert` of `count` rows in ONE statement (multi-row VALUES, each value a bind parameter named
    `<column>_<row>`), built once per shape: run on the driver like a one-row insert, where SQLAlchemy's
    own execution of a several-row INSERT costs several times the statement."""
    table: Table = model.__table__  # type: ignore[attr-defined]  # SQLModel sets it, undeclared
    values = [{column: bindparam(f"{column}_{i}", type_=table.c[column].type) for column in columns}
              for i in range(count)]
    stmt = (postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)).values(values)
    return Prepared(stmt.on_conflict_do_nothing(index_elements=list(conflict)).returning(table.c[returning]),
                    named=True)


def row_values(instance: SQLModel) -> dict[str, Any]:
    """Column values of a (not yet persisted) model instance, defaults included, for a Core INSERT."""
    table: Table = type(instance).__table__  # type: ignore[attr-defined]  # SQLModel sets it, undeclared
    values = {column.name: getattr(instance, column.name) for column in table.columns}
    return {name: value for name, value in values.items() if value is not None or name != "id"}


def naive_utc(moment: datetime) -> datetime:
    """The naive-UTC form every table stores (aware values are converted, naive ones taken as UTC)."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 with an explicit UTC offset, for JSON views."""
    if moment is None:
        return None
    return naive_utc(moment).replace(tzinfo=UTC).isoformat()
