"""Per-investigation records written by tasks: hops, evidence and trace events, all idempotent."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, update
from sqlalchemy.orm import make_transient_to_detached
from sqlmodel import Session, col, select

from investigation.errors import NotFound
from investigation.state import Evidence, HopState
from storage._common import after_commit, insert_ignore, insert_new, row_values, write
from storage._prepared import Prepared, load
from storage.models import EvidenceRecord, Hop, Investigation, TraceEvent, utcnow

_HOPS: Table = Hop.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
_INVESTIGATIONS: Table = Investigation.__table__  # type: ignore[attr-defined]

# The reads and the hop's state change every step runs, built once with their parameters as bind parameters:
# a statement built per call, and its cache key, would cost as much as running it on SQLite.
# Run as `Prepared` statements, loaded as the session's instances (storage/_prepared.py).
_EVIDENCE: Table = EvidenceRecord.__table__  # type: ignore[attr-defined]
_EVENTS: Table = TraceEvent.__table__  # type: ignore[attr-defined]
_HOP = Prepared(select(*_HOPS.c).where(_HOPS.c.investigation_id == bindparam("investigation_id"),
                                       _HOPS.c.number == bindparam("number")))
_HOPS_OF = Prepared(select(*_HOPS.c).where(_HOPS.c.investigation_id == bindparam("investigation_id"))
                    .order_by(_HOPS.c.number))
_EVIDENCE_OF = Prepared(
    select(*_EVIDENCE.c)
    .where(_EVIDENCE.c.investigation_id == bindparam("investigation_id"))
    .order_by(_EVIDENCE.c.hop, _EVIDENCE.c.score.desc(), _EVIDENCE.c.id)
)
_EVENTS_OF = Prepared(select(*_EVENTS.c).where(_EVENTS.c.investigation_id == bindparam("investigation_id"),
                                               _EVENTS.c.id > bindparam("after_id"))
                      .order_by(_EVENTS.c.id))
# An investigation's status with one hop's state and decision (NULLs when the hop was never planned).
_STEP_STATE = Prepared(
    select(_INVESTIGATIONS.c.status, _HOPS.c.state, _HOPS.c.decision)
    .select_from(_INVESTIGATIONS.outerjoin(_HOPS, (_HOPS.c.investigation_id == _INVESTIGATIONS.c.id)
                                           & (_HOPS.c.number == bindparam("number"))))
    .where(_INVESTIGATIONS.c.id == bindparam("investigation_id")))
# (An UPDATE's bind parameters may not be named after its columns.)
_PLANNED = (
    col(Hop.investigation_id) == bindparam("of_investigation"),
    col(Hop.number) == bindparam("of_number"),
    col(Hop.state) == HopState.PLANNED.value,
)
_REDUCE = {
    "state": HopState.REDUCED.value,
    "decision": bindparam("new_decision", type_=_HOPS.c.decision.type),
}
_REDUCE_HELD = (update(Hop).where(*_PLANNED).values(**_REDUCE).returning(Hop)
                .execution_options(populate_existing=True))
# Core, RETURNING only the decision: loading the row as an ORM object cost twice the write
_REDUCE_CORE = Prepared(update(_HOPS).where(*_PLANNED).values(**_REDUCE).returning(_HOPS.c.decision))


def save_hop(
    session: Session,
    *,
    investigation_id: str,
    number: int,
    queries: list[dict[str, Any]],
    engines: list[str],
    tools: list[dict[str, Any]] | None = None,
) -> Hop:
    """The planned hop; when it exists already (a redelivered task), the existing row unchanged."""
    hop = Hop(investigation_id=investigation_id, number=number, queries=list(queries), engines=list(engines),
              tools=list(tools or []))
    with write(session):  # one statement; a SELECT only when the hop existed
        # Core, RETURNING the id into the instance built here (its values are the row's): the ORM's INSERT ...
        # RETURNING the entity walks the statement's parameters on every call.
        new = insert_new(session, Hop, [row_values(hop)], ["investigation_id", "number"], "id")
        if new:  # the instance joins the session as the row it is (as a SELECT would have loaded it)
            hop.id = new.pop()
            make_transient_to_detached(hop)
            session.add(hop)
            return hop
        saved = get_hop(session, investigation_id=investigation_id, number=number)
    assert saved is not None  # just written, rows are never deleted
    return saved


def get_hop(session: Session, *, investigation_id: str, number: int) -> Hop | None:
    found = load(session, Hop, _HOP, {"investigation_id": investigation_id, "number": number})
    return found[0] if found else None


def step_state(session: Session, *, investigation_id: str, number: int) -> tuple[str, str | None, Any]:
    """The investigation's status, and hop `number`'s state and decision (None and None when that hop was
    never planned), in one statement: what a step reads when its process's previous step handed it the rows it
    wrote
    (`tasks.steps.Known`) — what another process may have changed meanwhile. NotFound for no investigation."""
    rows = _STEP_STATE.rows(session, {"investigation_id": investigation_id, "number": number})
    if not rows:
        raise NotFound(f"investigation {investigation_id} not found")
    status, state, decision = rows[0]
    return str(status), state, decision


def list_hops(session: Session, *, investigation_id: str) -> list[Hop]:
    return load(session, Hop, _HOPS_OF, {"investigation_id": investigation_id})


def mark_hop_reduced(
    session: Session, *, investigation_id: str, number: int, decision: dict[str, Any]
) -> dict[str, Any]:
    """Record the loop decision taken after a hop; returns the decision that stands. The first decision
    wins: a redelivered reducer gets the decision already recorded back, and must follow that one."""
    held = any(isinstance(h, Hop) and (h.investigation_id, h.number) == (investigation_id, number)
               for h in session.identity_map.values())
    params = {"of_investigation": investigation_id, "of_number": number, "new_decision": dict(decision)}
    with write(session):  # one UPDATE ... RETURNING; a SELECT only when the hop had been reduced before
        if held:  # the session's instance refreshed by the same statement
            hop = session.execute(_REDUCE_HELD, params).scalars().first()
            stands = None if hop is None else hop.decision
        else:
            rows = _REDUCE_CORE.rows(session, params)
            stands = rows[0][0] if rows else None
        if stands is None:
            found = get_hop(session, investigation_id=investigation_id, number=number)
            if found is None:
                raise NotFound(f"hop {number} of investigation {investigation_id} not found")
            stands = found.decision or {}
    return dict(stands)


def add_evidence(session: Session, *, investigation_id: str, evidence: Sequence[Evidence]) -> int:
    """Insert evidence not stored yet (by evidence id); returns how many rows were inserted."""
    rows: dict[str, dict[str, Any]] = {}
    for ev in evidence:  # the columns of EvidenceRecord but its id, as plain values (no model per row)
        rows.setdefault(ev.id, {
            "investigation_id": investigation_id, "evidence_id": ev.id, "chunk_id": ev.chunk_id,
            "source_id": ev.source_id, "title": ev.title, "text": ev.text, "url": ev.url,
            "score": float(ev.score), "grade": ev.grade.value, "hop": ev.hop, "query": ev.query,
            "visibility": str(ev.visibility.value), "flagged": ev.flagged,
        })
    if not rows:
        return 0
    with write(session):
        return insert_ignore(
            session, EvidenceRecord, list(rows.values()), ["investigation_id", "evidence_id"]
        )


def list_evidence(session: Session, *, investigation_id: str) -> list[EvidenceRecord]:
    """All evidence of an investigation: hop ascending, then score descending."""
    return load(session, EvidenceRecord, _EVIDENCE_OF, {"investigation_id": investigation_id}, attach=False)


@dataclass(frozen=True, slots=True)
class NewEvent:
    """A trace event not yet written: the columns of `TraceEvent` but its id. What a step collects,
    `add_events` and `finish_investigation` insert, and the observers hear of once it is committed. A plain
    record: a `TraceEvent` model built only to be turned into a row would cost a good share of writing it
    (SQLModel's construction and SQLAlchemy's attribute events)."""

    investigation_id: str
    step_key: str
    kind: str
    hop: int
    data: dict[str, Any]
    at: datetime

    def row(self) -> dict[str, Any]:
        """The values of an INSERT into `trace_event` (its id is the database's)."""
        return {"investigation_id": self.investigation_id, "step_key": self.step_key, "kind": self.kind,
                "hop": self.hop, "data": self.data, "at": self.at}


# Called after a trace event was written for the first time (metrics, logs); never raises into the step.
EventObserver = Callable[[Session, NewEvent], None]
EVENT_OBSERVERS: list[EventObserver] = []


def new_event(
    *, investigation_id: str, step_key: str, kind: str, hop: int = 0, data: dict[str, Any]
) -> NewEvent:
    """A trace event not yet written (`add_event`, or `finish_investigation` in its own transaction)."""
    return NewEvent(investigation_id=investigation_id, step_key=step_key, kind=kind, hop=hop, data=dict(data),
                    at=utcnow())


def insert_event(session: Session, event: NewEvent) -> bool:
    """Insert `event` in the caller's write transaction; False when its step was already recorded."""
    return insert_ignore(session, TraceEvent, [event.row()], ["investigation_id", "step_key"]) == 1


def notify_observers(session: Session, event: NewEvent) -> None:
    """Tell the observers (metrics, spans) about an event once its transaction has committed."""
    for observer in EVENT_OBSERVERS:
        observer(session, event)


def add_event(
    session: Session, *, investigation_id: str, step_key: str, kind: str, hop: int = 0, data: dict[str, Any]
) -> bool:
    """Append a trace event once per step key; False when that step was already recorded."""
    return add_events(session, [new_event(investigation_id=investigation_id, step_key=step_key, kind=kind,
                                          hop=hop, data=data)]) == 1


def add_events(session: Session, events: Sequence[NewEvent]) -> int:
    """Append trace events in one transaction (the caller's, inside `atomic`) and one INSERT, in order, each
    once per step key; returns how many were new. Observers hear of the new ones after the commit."""
    with write(session):
        if not events:
            return 0
        new = insert_new(session, TraceEvent, [e.row() for e in events], ["investigation_id", "step_key"],
                         "step_key")
        added: list[NewEvent] = []
        for event in events:  # of two events with one step key, the first was inserted
            if event.step_key in new:
                new.discard(event.step_key)
                added.append(event)
                after_commit(session, functools.partial(notify_observers, session, event))
    return len(added)


def list_events(session: Session, *, investigation_id: str, after_id: int = 0) -> list[TraceEvent]:
    """Events in the order they were written, those with an id above `after_id` (for polling)."""
    return load(session, TraceEvent, _EVENTS_OF, {"investigation_id": investigation_id, "after_id": after_id},
                attach=False)
