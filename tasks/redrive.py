"""Re-drive what a dead worker dropped, instead of waiting for the visibility timeout or the deadline.

An active investigation with no write for `redrive_idle_seconds`, none of whose messages is queued or
held by a live worker, has lost its next step (a worker's main process died holding it, or died between
finishing a hop's retrievals and sending its reducer: a chord that never closed). Its next step is read
back from the database and sent again; every step is idempotent, so a message that later reappears from
the broker's unacked set is a no-op. The same goes for pending deliveries of finished investigations.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from celery import Celery

from bootstrap import Services
from investigation.state import Status
from storage import repositories as repo
from tasks import workflow
from tasks.fairness import fairness
from tasks.next import Next, NextKind, hop_slots
from workers.inflight import in_flight_text

log = logging.getLogger(__name__)


@dataclass
class Redriven:
    investigations: dict[str, str] = field(default_factory=dict)  # id -> the step sent again
    deliveries: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"investigations": self.investigations, "deliveries": self.deliveries}


def next_step(services: Services, inv_id: str) -> Next | None:
    """The step an active investigation waits for, from its durable state (None when it is finished)."""
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        if Status(inv.status).terminal:
            return None
        hops = repo.list_hops(session, investigation_id=inv_id)
    if not hops:
        return Next(NextKind.START)
    last = hops[-1]
    if last.state != "reduced":
        return Next(NextKind.HOP, last.number, hop_slots(last.queries, last.engines))
    return Next(NextKind.SYNTHESIZE, last.number)


def redrive(app: Celery, services: Services, *, now: datetime | None = None,
            in_flight: str | None = None) -> Redriven:
    """Send again the next step of every idle investigation and every stranded delivery not in flight."""
    now = now or datetime.now(UTC)
    idle_since = now - timedelta(seconds=services.settings.workers.redrive_idle_seconds)
    with services.session() as session:
        idle = repo.list_idle(session, idle_since=idle_since)
        stranded = repo.list_stranded_deliveries(session, idle_since=idle_since)
    done = Redriven()
    if idle:  # investigations held back by tenant fairness wait on purpose (app.admission releases them),
        # and so do parked steps (app.admission_steps sends them again as their tenant's steps finish)
        waiting = fairness().waiting(services, idle)
        idle = [i for i in idle if i not in waiting]
    if not idle and not stranded:
        return done
    held = in_flight if in_flight is not None else in_flight_text(app, services.settings)
    idle = [i for i in idle if i not in held]
    stranded = [d for d in stranded if d not in held]
    if (idle or stranded) and in_flight is None:
        # Confirm with a second look: a worker busy on a loaded host may miss one inspect reply, and a
        # false "lost" costs a duplicate step (harmless, steps are idempotent, but wasted work).
        held = in_flight_text(app, services.settings)
        idle = [i for i in idle if i not in held]
        stranded = [d for d in stranded if d not in held]
    for inv_id in idle:
        nxt = next_step(services, inv_id)
        if nxt is None:
            continue
        label = nxt.kind if nxt.kind != "hop" else f"hop {nxt.hop}"
        with services.session() as session:  # also marks it active: not re-driven again before it idles
            repo.add_event(
                session,
                investigation_id=inv_id,
                step_key=f"redrive:{now.timestamp():.3f}",
                kind="redrive",
                hop=nxt.hop,
                data={"step": label, "reason": "no message in flight"},
            )
            tenant_id = repo.get_investigation(session, investigation_id=inv_id).tenant_id
        log.warning("re-driving %s of investigation %s: nothing in flight", label, inv_id)
        workflow.dispatch(app, inv_id, nxt, priority=fairness().priority(services, tenant_id))
        done.investigations[inv_id] = label
    for delivery_id in stranded:
        log.warning("re-driving delivery %s: pending with no message in flight", delivery_id)
        workflow.redeliver(app, delivery_id)
        done.deliveries.append(delivery_id)
    return done


__all__ = ["Redriven", "next_step", "redrive"]
