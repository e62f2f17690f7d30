"""Investigations: idempotent intake, updates, the one-time move to a terminal status, overdue scan."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, bindparam, case, update
from sqlmodel import Session, col, select

from investigation.errors import NotFound, ValidationFailed
from investigation.state import Mode, Status
from storage._common import after_commit, insert_row, naive_utc, row_values, write
from storage._deliveries import delivery_rows
from storage._prepared import Prepared, load, one_of
from storage._records import NewEvent, insert_event, notify_observers
from storage.models import Investigation, Tenant, utcnow

# Derived from `Status.terminal`, the one definition of which statuses are final.
ACTIVE = tuple(s.value for s in Status if not s.terminal)
TERMINAL = tuple(s.value for s in Status if s.terminal)
_COUNTS = frozenset({"hops", "retrieval_calls", "llm_input_tokens", "llm_output_tokens"})
_READONLY_FIELDS = frozenset({"id", "tenant_id", "idempotency_key", "created_at"})
_TABLE: Table = Investigation.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_COLUMNS = frozenset(_TABLE.columns.keys())
# Every step reads its investigation: the statement is built once, not per call; as
# `Session.get(..., populate_existing=True)` did, the row is loaded into the session (its identity
# map), refreshed if the session held it, after what is pending has been flushed.
_BY_ID = Prepared(select(*_TABLE.c).where(_TABLE.c.id == bindparam("investigation_id")))


def create_investigation(
    session: Session,
    *,
    tenant: Tenant,
    question: str,
    mode: str,
    callback: dict[str, Any] | list[dict[str, Any]] | None,
    budget: dict[str, Any],
    idempotency_key: str | None,
    deadline_seconds: int,
    audience: str = "agent",
    principals: Sequence[str] = (),
    context: dict[str, Any] | None = None,
) -> tuple[Investigation, bool]:
    """(investigation, created). The same (tenant, idempotency_key) returns the existing one, uncreated.

    The callback's Delivery row is written in the same transaction, so an accepted investigation always
    has its delivery.
    """
    tenant_id = tenant.id
    _validate(question=question, mode=mode, callback=callback, deadline_seconds=deadline_seconds)
    if audience not in ("agent", "customer"):
        raise ValidationFailed("audience", "must be agent or customer")
    now = utcnow()
    inv = Investigation(
        tenant_id=tenant_id,
        question=question,
        mode=mode,
        audience=audience,
        principals=list(principals),
        context=dict(context or {}),
        callback=callback,
        budget=dict(budget),
        idempotency_key=idempotency_key,
        created_at=now,
        updated_at=now,
        deadline_at=now + timedelta(seconds=deadline_seconds),
    )
    with write(session):
        written = insert_row(session, Investigation, row_values(inv), ["tenant_id", "idempotency_key"])
        if written is not None and callback is not None:
            session.add_all(delivery_rows(inv.id, tenant_id, callback))
            session.flush()
        if written is not None:
            return written, True
        # Another request holding the same key won (on PostgreSQL the INSERT waited for its commit).
        stmt = select(Investigation).where(
            Investigation.tenant_id == tenant_id, Investigation.idempotency_key == idempotency_key
        )
        return session.exec(stmt.execution_options(populate_existing=True)).one(), False


def _validate(*, question: str, mode: str, callback: dict[str, Any] | list[dict[str, Any]] | None,
              deadline_seconds: int) -> None:
    if not isinstance(question, str) or not question.strip():
        raise ValidationFailed("question", "must not be empty")
    if mode not in {m.value for m in Mode}:
        raise ValidationFailed("mode", f"must be one of {', '.join(m.value for m in Mode)}")
    entries = [callback] if isinstance(callback, dict) else callback
    if callback is not None and not (
        isinstance(entries, list) and entries
        and all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in entries)
    ):
        raise ValidationFailed("callback", "must be an object with a 'type', or a non-empty list of them")
    if deadline_seconds <= 0:
        raise ValidationFailed("deadline_seconds", "must be positive")


def get_investigation(
    session: Session, *, investigation_id: str, tenant_id: str | None = None
) -> Investigation:
    """NotFound also when the investigation belongs to another tenant (its existence is not revealed)."""
    found = load(session, Investigation, _BY_ID, {"investigation_id": investigation_id})
    inv = found[0] if found else None
    if inv is None or (tenant_id is not None and inv.tenant_id != tenant_id):
        raise NotFound(f"investigation {investigation_id} not found")
    return inv


_STATUS_OF = Prepared(
    select(_TABLE.c.status, _TABLE.c.tenant_id).where(_TABLE.c.id == bindparam("investigation_id"))
)


def investigation_status(session: Session, *, investigation_id: str, tenant_id: str | None = None) -> str:
    """The status alone (what a long-polling request reads every few ms); NotFound as `get_investigation`."""
    rows = _STATUS_OF.rows(session, {"investigation_id": investigation_id})
    if not rows or (tenant_id is not None and rows[0][1] != tenant_id):
        raise NotFound(f"investigation {investigation_id} not found")
    return str(rows[0][0])


def update_investigation(session: Session, *, investigation_id: str, **fields: Any) -> Investigation:
    """Set columns of an investigation (and `updated_at`); unknown or read-only names are refused.

    `status` may only be set to queued/running (terminal statuses go through `finish_investigation`),
    and a terminal investigation keeps its status, so a late worker cannot bring it back to life.
    Returns the row as written; `set_investigation` is the same write for a caller that does not need it.
    """
    # One UPDATE ... RETURNING (SQLite >= 3.35, PostgreSQL): the row as written, loaded into the session.
    stmt, params = _update(investigation_id, _update_values(fields), returning=True)
    with write(session):
        found = _returned(session, stmt, params)
    if found is None:
        raise NotFound(f"investigation {investigation_id} not found")
    return found


def set_investigation(session: Session, *, investigation_id: str, **fields: Any) -> None:
    """`update_investigation` for a caller that does not need the row back: one Core UPDATE, no ORM object
    loaded (a third of the CPU). When this session holds the row, `update_investigation` refreshes it."""
    if _held(session, investigation_id) is not None:
        update_investigation(session, investigation_id=investigation_id, **fields)
        return
    stmt, params = _update(investigation_id, _update_values(fields), returning=False)
    with write(session):
        if stmt.count(session, params) == 0:
            raise NotFound(f"investigation {investigation_id} not found")


def _update_values(fields: dict[str, Any]) -> dict[str, Any]:
    """The columns an update sets: `fields` checked, and `updated_at`."""
    for name in fields:
        if name not in _COLUMNS or name in _READONLY_FIELDS:
            raise ValidationFailed(name, "not an updatable investigation field")
    if "status" in fields and fields["status"] not in ACTIVE:
        raise ValidationFailed("status", "use finish_investigation for a terminal status")
    return {**fields, "updated_at": utcnow()}


@functools.lru_cache(maxsize=64)  # one per set of columns and kind of call: a handful in the code
def _update_statement(names: tuple[str, ...], *, returning: bool, finish: bool = False) -> Prepared:
    """The UPDATE of investigation "row_id" setting the columns `names` from the bind parameters "new_<name>"
    (an UPDATE's parameters may not be named after its columns): built once per set of columns. A status set
    here never revives a terminal investigation (decided in the same statement as the write, so no worker can
    race it); `finish`: the row must still be active (the move to a terminal status, `finish_investigation`).
    `returning`: the statement RETURNING the row (`_returned` loads it into the session, refreshing its
    instance); else one that returns nothing. Both are `Prepared`: the ORM's bulk UPDATE costs several times
    the statement."""
    values: dict[str, Any] = {name: bindparam(f"new_{name}", type_=_TABLE.c[name].type) for name in names}
    if "status" in values and not finish:
        values["status"] = case((one_of(_TABLE.c.status, TERMINAL), _TABLE.c.status), else_=values["status"])
    where = [_TABLE.c.id == bindparam("row_id")]
    if finish:
        where.append(one_of(_TABLE.c.status, ACTIVE))
    statement = update(_TABLE).where(*where).values(**values)
    return Prepared(statement.returning(*_TABLE.c) if returning else statement)


def _returned(session: Session, stmt: Prepared, params: dict[str, Any]) -> Investigation | None:
    """Run an UPDATE ... RETURNING the row and load the row into the session as an ORM select with
    ``populate_existing`` would (the instance the session holds is refreshed); None when no row matched.
    What the session has pending is flushed first, as the ORM's autoflush did before the statement."""
    session.flush()
    rows = load(session, Investigation, stmt, params)
    return rows[0] if rows else None


def _update(investigation_id: str, values: dict[str, Any], *, returning: bool,
            finish: bool = False) -> tuple[Prepared, dict[str, Any]]:
    """`_update_statement` setting `values` on the investigation, and its parameters."""
    params = {"row_id": investigation_id, **{f"new_{name}": value for name, value in values.items()}}
    return _update_statement(tuple(values), returning=returning, finish=finish), params


def _held(session: Session, investigation_id: str) -> Investigation | None:
    """The session's instance of the row, if it holds one (a write then refreshes it in the same
    statement)."""
    held: Investigation | None = session.identity_map.get(
        session.identity_key(Investigation, investigation_id)
    )
    return held


def finish_investigation(
    session: Session,
    *,
    investigation_id: str,
    status: str,
    stop_reason: str | None,
    answer: str | None = None,
    citations: Sequence[dict[str, Any]] = (),
    caveat: str | None = None,
    error: str | None = None,
    final_evidence_ids: Sequence[str] = (),
    evidence_tokens: int | None = None,
    counts: dict[str, int] | None = None,
    event: NewEvent | None = None,
) -> bool:
    """Move a queued/running investigation to a terminal status; False when it already was terminal.

    One conditional UPDATE, so of the watchdog and a late worker exactly one finishes it. `event` (the
    step's trace event) is written in the same transaction when this call finishes it: whoever sees the
    terminal status sees the event, and the event's observers see the terminal status. `counts` (final
    counters such as hops, retrieval_calls) are set in the same UPDATE, or, when it was terminal already,
    on their own (`update_investigation`: the status stays), as a separate update before this call did.
    """
    if status not in TERMINAL:
        raise ValidationFailed("status", f"must be one of {', '.join(TERMINAL)}")
    now = utcnow()
    values: dict[str, Any] = {
        "status": status,
        "stop_reason": stop_reason,
        "answer": answer,
        "citations": [dict(c) for c in citations],
        "caveat": caveat,
        "error": error,
        "final_evidence_ids": list(final_evidence_ids),
        "finished_at": now,
        "updated_at": now,
    }
    if evidence_tokens is not None:
        values["evidence_tokens"] = evidence_tokens
    for name in counts or {}:
        if name not in _COUNTS:
            raise ValidationFailed(name, "not a final count of an investigation")
    values.update(counts or {})
    held = _held(session, investigation_id)
    # Core when the session holds no instance: loading the whole row back as an ORM object cost more than the
    # write itself; else one statement that also refreshes the session's instance (RETURNING the row into it).
    stmt, params = _update(investigation_id, values, returning=held is not None, finish=True)
    with write(session):
        if held is None:
            finished = bool(stmt.count(session, params) == 1)
        else:
            finished = _returned(session, stmt, params) is not None
        if not finished and counts:
            set_investigation(session, investigation_id=investigation_id, **counts)
        if finished and event is not None and insert_event(session, event):
            after_commit(session, functools.partial(notify_observers, session, event))
        if not finished and held is not None:
            session.refresh(held)
    return finished


def list_overdue(session: Session, *, now: datetime, limit: int = 100) -> list[str]:
    """Ids of queued/running investigations whose deadline has passed, oldest deadline first."""
    stmt = (
        select(Investigation.id)
        .where(col(Investigation.status).in_(ACTIVE), col(Investigation.deadline_at) < naive_utc(now))
        .order_by(col(Investigation.deadline_at))
        .limit(limit)
    )
    return list(session.exec(stmt).all())
