"""A step's trace events, written in the transaction of the state change they explain, and the small
reads every step ends with (the deliveries left to make)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bootstrap import Services
from storage import repositories as repo

log = logging.getLogger(__name__)


class StepTrace:
    """A step's trace events, collected as it decides and written in the same transaction as the state
    change they explain (`repo.atomic`): one commit per step instead of one per event, in the same order."""

    def __init__(self, inv_id: str) -> None:
        self.inv_id = inv_id
        self.events: list[repo.NewEvent] = []

    def add(self, step_key: str, kind: str, hop: int = 0, **data: Any) -> None:
        self.events.append(repo.new_event(investigation_id=self.inv_id, step_key=step_key, kind=kind, hop=hop,
                                          data=data))

    def write(self, session: Any) -> None:
        """Insert the collected events (each once per step key) in the caller's transaction."""
        repo.add_events(session, self.events)
        self.events = []


def event(services: Services, inv_id: str, step_key: str, kind: str, hop: int = 0, **data: Any) -> None:
    """One trace event in its own transaction."""
    with services.session() as session:
        repo.add_event(session, investigation_id=inv_id, step_key=step_key, kind=kind, hop=hop, data=data)


def synthesis_event(inv_id: str, **data: Any) -> repo.NewEvent:
    """The answer step's trace event, written with the terminal status in one transaction."""
    return repo.new_event(investigation_id=inv_id, step_key="synthesis", kind="synthesis", data=data)


def write_events(services: Services, events: Sequence[repo.NewEvent], *, quietly: bool = False) -> None:
    """Search events handed on and not written with a reduction, in their own transaction (none: nothing).
    `quietly` while another error is on its way up: that one is raised, a failure here only logged."""
    if not events:
        return
    try:
        with services.session() as session:
            repo.add_events(session, events)
    except Exception:
        if not quietly:
            raise
        log.warning("could not write %d search events of %s", len(events), events[0].investigation_id,
                    exc_info=True)


def pending_deliveries(session: Any, inv_id: str) -> tuple[str, ...]:
    """The investigation's deliveries still to make (what a terminal step hands to delivery)."""
    return tuple(
        d.id for d in repo.list_deliveries(session, investigation_id=inv_id) if d.status == "pending"
    )
