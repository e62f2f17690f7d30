"""`storage._prepared`: statements run on the driver read and write what SQLAlchemy's execution would, load
the
session's instances as an ORM select does, and fail as SQLAlchemy fails (SQLite and PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, Table, bindparam, event, insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session

from storage._prepared import Prepared, load
from storage.db import database_unavailable_errors, make_engine
from storage.models import Investigation, Tenant, TraceEvent, utcnow
from storage.repositories import add_event, get_investigation, list_events, update_investigation
from tests.integration.storage.conftest import new_investigation

_INVESTIGATIONS: Table = Investigation.__table__  # type: ignore[attr-defined]
_BY_ID = Prepared(select(*_INVESTIGATIONS.c).where(_INVESTIGATIONS.c.id == bindparam("i")))


def _orm_row(engine: Engine, model: type[Any], key: Any) -> dict[str, Any]:
    with Session(engine) as other:
        found = other.get(model, key)
        assert found is not None
        return dict(found.model_dump())


def test_a_prepared_read_gives_the_values_the_orm_reads(
    db_engine: Engine, session: Session, tenant: Tenant
) -> None:
    inv = new_investigation(session, tenant, context={"plan": "pro", "seats": [1, 2.5, None]},
                            callback={"type": "webhook", "url": "https://example.test/h"}, principals=["g:1"])
    update_investigation(
        session,
        investigation_id=inv.id,
        plan={"subqueries": ["a", "b"]},
        subqueries=["é ✓"],
        status="running",
    )
    session.commit()
    session.expunge_all()
    (loaded,) = load(session, Investigation, _BY_ID, {"i": inv.id})
    assert loaded.model_dump() == _orm_row(db_engine, Investigation, inv.id)
    assert loaded.context == {"plan": "pro", "seats": [1, 2.5, None]} and loaded.subqueries == ["é ✓"]
    # the naive-UTC datetimes as stored
    assert loaded.created_at.tzinfo is None and loaded.finished_at is None


def test_loaded_instances_are_the_sessions_and_are_refreshed_by_a_later_read(
        db_engine: Engine, session: Session, tenant: Tenant) -> None:
    inv = new_investigation(session, tenant)
    session.commit()
    session.expunge_all()
    first = get_investigation(session, investigation_id=inv.id)
    assert first in session and not session.dirty and not session.new  # as loaded: nothing to flush
    session.commit()
    with Session(db_engine) as other:  # another process moves it on
        update_investigation(other, investigation_id=inv.id, status="running")
    again = get_investigation(session, investigation_id=inv.id)
    assert again is first and first.status == "running"  # the held instance, refreshed (populate_existing)
    assert not session.dirty


def test_records_never_changed_are_loaded_detached(session: Session, tenant: Tenant) -> None:
    inv = new_investigation(session, tenant)
    add_event(session, investigation_id=inv.id, step_key="s1", kind="route", data={"route": "lookup"})
    (ev,) = list_events(session, investigation_id=inv.id)
    assert ev not in session and inspect(ev).detached and ev.data == {"route": "lookup"}
    session.add(ev)  # joins as the stored row: nothing is written again
    assert ev in session and not session.new and not session.dirty


def test_a_batch_counts_the_rows_it_changed(session: Session, tenant: Tenant) -> None:
    ids = [new_investigation(session, tenant).id for _ in range(3)]
    table = _INVESTIGATIONS
    touch = Prepared(
        update(table).where(table.c.id == bindparam("row_id")).values(answer=bindparam("new_answer"))
    )
    assert touch.count(session, [{"row_id": i, "new_answer": "x"} for i in [*ids, "missing"]]) == 3
    assert touch.count(session, []) == 0
    session.commit()
    assert {get_investigation(session, investigation_id=i).answer for i in ids} == {"x"}


def test_a_driver_error_is_raised_as_sqlalchemys_and_loses_nothing(session: Session, tenant: Tenant) -> None:
    events: Table = TraceEvent.__table__  # type: ignore[attr-defined]
    inv = new_investigation(session, tenant)
    session.commit()
    plain = Prepared(insert(events))
    row = {"investigation_id": inv.id, "step_key": "k", "kind": "route", "hop": 0, "data": {}, "at": utcnow()}
    plain.count(session, row)
    with pytest.raises(IntegrityError) as raised:  # the same step key twice
        plain.count(session, row)
    assert "trace_event" in str(raised.value.statement)
    session.rollback()  # the transaction is given up whole: neither row stays
    assert list_events(session, investigation_id=inv.id) == []


def test_the_engines_cursor_events_see_every_statement(
    db_engine: Engine, session: Session, tenant: Tenant
) -> None:
    inv = new_investigation(session, tenant)
    session.commit()
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement.split()[0])

    event.listen(db_engine, "before_cursor_execute", record)
    try:
        get_investigation(session, investigation_id=inv.id)
        session.commit()
    finally:
        event.remove(db_engine, "before_cursor_execute", record)
    assert "SELECT" in seen


def test_statements_it_cannot_run_are_refused_on_first_use(session: Session) -> None:
    table = _INVESTIGATIONS
    with pytest.raises(ValueError, match="IN list"):
        Prepared(select(table.c.id).where(table.c.status.in_(["queued", "running"]))).rows(session, {})
    with pytest.raises(ValueError, match="defaults"):  # created_at, status…: Python-side defaults to compute
        Prepared(insert(table)).count(session, {"id": "x", "tenant_id": "t", "question": "q?"})


def test_a_fresh_process_can_load_before_any_orm_query(db_url: str, session: Session, tenant: Tenant) -> None:
    inv = new_investigation(session, tenant)
    session.commit()
    script = ("import sys\nfrom sqlmodel import Session\nfrom storage.db import make_engine\n"
              "from storage.repositories import get_investigation\n"
              "with Session(make_engine(sys.argv[1])) as s:\n"
              "    print(get_investigation(s, investigation_id=sys.argv[2]).question)\n")
    done = subprocess.run(
        [sys.executable, "-c", script, db_url, inv.id],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == inv.question


def test_a_connection_the_server_dropped_is_replaced(db_url: str, tenant: Tenant, session: Session) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("a server that drops connections: PostgreSQL")
    inv = new_investigation(session, tenant)
    session.commit()
    engine = make_engine(db_url, pool_size=1, max_overflow=0, pool_pre_ping=False)
    try:
        with Session(engine) as victim:
            pid = victim.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar()
            admin = make_engine(db_url)
            with admin.begin() as connection:
                connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            admin.dispose()
            with pytest.raises(database_unavailable_errors()) as raised:
                get_investigation(victim, investigation_id=inv.id)
            assert isinstance(raised.value, OperationalError) and raised.value.connection_invalidated
        with Session(engine) as after:  # the pool's one connection was replaced, not handed out dead
            assert get_investigation(after, investigation_id=inv.id).id == inv.id
    finally:
        engine.dispose()
