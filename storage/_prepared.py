"""Statements the investigation loop runs on every step, compiled once and run straight on the driver.

For one row on SQLite, SQLAlchemy's execution of a statement (an execution context, result metadata and,
for an ORM select, the ORM's loading) costs several times the statement itself. A `Prepared`
statement is compiled once per dialect by SQLAlchemy's compiler, its parameters and rows go through the
column types' own bind and result processors (so what is written and read is what SQLAlchemy would write
and read, on SQLite and PostgreSQL alike), and it runs on the DBAPI cursor of the session's connection, in
the session's transaction. The engine's cursor events still fire (statement counts, tracing) and a driver
error is raised as SQLAlchemy's (`storage.db.driver_execute`). `load` turns rows into the session's model
instances the way an ORM select with ``populate_existing`` does.

Restrictions, checked when a statement is first compiled: no IN lists (expanding parameters) and, for an
INSERT, every column without a server default given by the caller (no Python-side defaults to compute).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import inspect, or_
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import configure_mappers
from sqlalchemy.orm.attributes import instance_state, set_committed_value
from sqlalchemy.sql import Select
from sqlalchemy.sql.dml import UpdateBase
from sqlmodel import Session, SQLModel

from storage.db import driver_execute

M = TypeVar("M", bound=SQLModel)
_Processors = tuple[tuple[int, Callable[[Any], Any]], ...]


@dataclass(slots=True)
class _Plan:
    """A statement compiled for one dialect (and one set of INSERT columns)."""

    sql: str
    compiled: Any  # sqlalchemy.engine.Compiled
    order: tuple[str, ...] | None  # the parameters' names in order for a positional paramstyle, else None
    binds: tuple[tuple[str, Callable[[Any], Any]], ...]  # (name, bind processor) of those that have one
    keys: tuple[str, ...]  # result columns
    types: tuple[Any, ...]  # their types
    results: dict[tuple[Any, ...], _Processors] = field(default_factory=dict)  # by the driver's column types

    def parameters(self, params: Mapping[str, Any]) -> Any:
        values = self.compiled.construct_params(params)
        for name, process in self.binds:
            values[name] = process(values[name])
        return values if self.order is None else tuple(values[name] for name in self.order)

    def processors(self, dialect: Dialect, description: Sequence[Sequence[Any]]) -> _Processors:
        """The result processors by column index, of the columns that have one (for the driver's types)."""
        codes = tuple(column[1] for column in description)
        found = self.results.get(codes)
        if found is None:
            found = self.results[codes] = tuple(
                (index, process) for index, (kind, code) in enumerate(zip(self.types, codes))
                if (process := kind.dialect_impl(dialect).result_processor(dialect, code)) is not None)
        return found


class Prepared:
    """A Core statement (a select, or an insert/update with or without RETURNING) to run with `rows`,
    `count` or `load`; parameters by bind parameter name (for an INSERT: by column name)."""

    def __init__(self, statement: Select[Any] | UpdateBase, *, named: bool = False) -> None:
        """`named`: an INSERT whose values are bind parameters named in the statement (several rows, each
        with its own names): compiled once, its parameters by those names like a select's."""
        self.statement = statement
        # An INSERT is compiled for the columns it is given (by column name).
        self._insert = bool(statement.is_insert) and not named
        self._plans: dict[tuple[str, str, tuple[str, ...]], _Plan] = {}
        self._lock = threading.Lock()

    def _plan(self, dialect: Dialect, columns: tuple[str, ...]) -> _Plan:
        key = (dialect.name, dialect.driver, columns)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key) or self._compile(dialect, columns)
                self._plans[key] = plan
        return plan

    def _compile(self, dialect: Dialect, columns: tuple[str, ...]) -> _Plan:
        configure_mappers()  # before `load` builds the first instance of a model (a no-op once done)
        compiled: Any = self.statement.compile(dialect=dialect, column_keys=list(columns) or None)
        names = compiled.bind_names  # BindParameter -> its name in the statement
        if any(bind.expanding for bind in names):
            raise ValueError(f"a Prepared statement takes no IN list: {compiled.string}")
        if compiled.insert_prefetch or compiled.update_prefetch:
            raise ValueError(f"columns need Python-side defaults, give them: {compiled.string}")
        binds = []
        for bind, name in names.items():
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                binds.append((name, process))
        statement = self.statement
        returned = list(
            statement.selected_columns if isinstance(statement, Select) else statement.exported_columns
        )
        order = tuple(compiled.positiontup) if compiled.positional else None
        return _Plan(
            sql=compiled.string,
            compiled=compiled,
            order=order,
            binds=tuple(binds),
            keys=tuple(str(column.key) for column in returned),
            types=tuple(column.type for column in returned),
        )

    def rows(self, session: Session, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows the statement returns, their values as the column types give them."""
        return self.fetch(session, params)[1]

    def fetch(
        self, session: Session, params: Mapping[str, Any]
    ) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """The names of the columns returned, and the rows."""
        connection = session.connection()
        plan = self._plan(connection.dialect, tuple(params) if self._insert else ())
        cursor = driver_execute(connection, plan.sql, plan.parameters(params))
        try:
            raw = cursor.fetchall()
            if not raw:
                return plan.keys, []
            processors = plan.processors(connection.dialect, cursor.description)
        finally:
            cursor.close()
        if not processors:
            return plan.keys, raw
        rows = []
        for row in raw:
            values = list(row)
            for index, process in processors:
                values[index] = process(values[index])
            rows.append(tuple(values))
        return plan.keys, rows

    def count(self, session: Session, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> int:
        """How many rows the statement changed: one set of parameters, or several run as one batch (rows of an
        INSERT all with the same columns)."""
        connection = session.connection()
        many = not isinstance(params, Mapping)
        batch: Sequence[Mapping[str, Any]] = [params] if isinstance(params, Mapping) else params
        if not batch:
            return 0
        plan = self._plan(connection.dialect, tuple(batch[0]) if self._insert else ())
        values = [plan.parameters(p) for p in batch]
        cursor = driver_execute(connection, plan.sql, values if many else values[0], many=many)
        try:
            return max(int(cursor.rowcount), 0)
        finally:
            cursor.close()


def one_of(column: Any, values: Sequence[Any]) -> Any:
    """`column IN values` written as ORs, for a `Prepared` statement (it takes no IN list; the same rows
    match)."""
    return or_(*(column == value for value in values))


def load(session: Session, model: type[M], statement: Prepared, params: Mapping[str, Any], *,
         attach: bool = True) -> list[M]:
    """The rows of `statement` (selecting every column of `model`'s table) as instances of `model`.

    `attach`: as the session's instances, the way an ORM select with ``populate_existing`` loads them (an
    instance the session holds is refreshed with the row, a new one joins the session as loaded: nothing to
    flush). Else detached ones, as after the session closed: for rows never changed once written (evidence,
    trace events), where joining the session costs more than reading them."""
    keys, rows = statement.fetch(session, params)
    if not rows:
        return []
    mapper = inspect(model)
    new_instance = mapper.class_manager.new_instance
    found: list[M] = []
    primary = tuple(keys.index(column.key) for column in mapper.primary_key)
    for row in rows:
        identity = mapper.identity_key_from_primary_key(tuple(row[i] for i in primary))
        held = session.identity_map.get(identity) if attach else None
        if held is not None:
            for name, value in zip(keys, row):
                set_committed_value(held, name, value)
            found.append(held)
            continue
        instance = new_instance()
        instance.__dict__.update(zip(keys, row))
        # The row it is (what `make_transient_to_detached` does for an instance with every column loaded and
        # no history, at a third of its cost): detached, persistent once added.
        instance_state(instance).key = identity
        if attach:
            session.add(instance)
        found.append(instance)
    return found
