"""Planning a hop (by `start` for hop 1, by a reducer for the next): record its queries, charge it once,
plan its tools, save it with the step's trace events."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from bootstrap import Services
from investigation.entities import ENGINE as ENTITY_ENGINE
from investigation.entities import hop_engines, seed_query
from investigation.state import Evidence, Plan, RouteDecision, SubQuery
from storage import repositories as repo
from tasks import tool_step
from tasks.facts import Facts, HopFacts
from tasks.next import Next, NextKind, hop_marker, hop_slots
from tasks.relay import Relay
from tasks.trace import StepTrace


def with_queries(held: Facts, queries: Sequence[SubQuery], *, route: RouteDecision | None = None,
                 plan: Plan | None = None) -> Facts:
    """The investigation once hop `queries` are recorded (`record_hop_queries`): its running list of
    sub-queries, and at hop 1 its route and plan. `held` is what this step read or wrote: while a step runs no
    other step writes its sub-queries (start runs before any hop; a hop's reducer holds its lease)."""
    changes: dict[str, Any] = {"subqueries": list(held.subqueries) + [q.text for q in queries
                                                                      if q.text not in held.subqueries]}
    if route is not None:
        changes.update(route=route.route.value, route_reason=route.reason)
    if plan is not None:
        changes["plan"] = plan.model_dump(mode="json")
    return dataclasses.replace(held, **changes)


def record_hop_queries(
    session: Any, after: Facts, number: int, *, first_hop: bool = False, **counts: int
) -> None:
    """Write what `with_queries` gave (`after`) and the hop count (`counts`: other counters to set in the same
    UPDATE), before the hop's tools are planned: tool policy reads the route."""
    fields: dict[str, Any] = {"subqueries": list(after.subqueries), "hops": number, **counts}
    if first_hop:
        fields.update(route=after.route, route_reason=after.route_reason, plan=after.plan)
    repo.set_investigation(session, investigation_id=after.id, **fields)


def plan_hop(services: Services, inv: Facts, number: int, queries: list[SubQuery], *,
             first: Callable[[Any], object] | None = None, then: Callable[[Any], object] | None = None,
             trace: StepTrace | None = None, charge_later: bool = False, relay: Relay | None = None,
             evidence: Sequence[Evidence] = ()) -> Next:
    """Charge the hop (once; with `charge_later`, its searches do: `hop_marker`), plan its tools, then save
    it and its trace event in one transaction with `first(session)` (the step's own writes, before the
    tools are read: tool policy reads the route) and `then(session)` (the previous hop's decision, when a
    reducer plans the next hop).

    A tenant without tools (the common case) needs one transaction for all of it: `first`, the read of its
    tools, the hop. A tenant with tools commits `first` on its own, then its tools are planned outside the
    write (they may embed, read policy state and trace refusals) and the hop is saved in a second one.
    The step's trace events (`trace`) are written with `first`'s writes, in one INSERT with the hop's own
    event when both go in one transaction.
    `inv` is what the caller knows of the investigation once `first` has run (its tenant, audience and
    principals never change). Given a `relay`, it is handed `inv` and the hop as saved (`Relay.planned`).
    With the `entities` engine, a follow-up hop also searches the entities its graded `evidence` names
    (`investigation.entities.seed_query`): one slot, on that engine only (`tasks.next.hop_slots`)."""
    inv_id = inv.id
    engines = hop_engines(list(services.backends), number)
    seeded = seed_query(inv.question, evidence) if ENTITY_ENGINE in engines and evidence else None
    if seeded is not None:
        queries = [*queries, seeded]
    qdicts = [q.model_dump() for q in queries]
    if not charge_later:
        # a redelivered step: never twice
        services.state.charge_once(inv_id, hop_marker(inv_id, number), "hops")

    def save(session: Any, tools: list[dict[str, Any]]) -> tuple[Next, HopFacts | None]:
        saved = repo.save_hop(session, investigation_id=inv_id, number=number, queries=qdicts,
                              engines=engines, tools=tools)  # a redelivered step keeps the first plan
        # This process's slots of the hop then read no plan (kept once the transaction has committed).
        repo.remember_plan(session, investigation_id=inv_id, number=number, tenant_id=inv.tenant_id,
                           audience=inv.audience, principals=list(inv.principals or ()),
                           queries=[str(q["text"]) for q in saved.queries])
        events = trace if trace is not None else StepTrace(inv_id)
        events.add(f"hop:{number}", "hop", hop=number, queries=[q.text for q in queries], engines=engines,
                   tools=tools)
        events.write(session)
        if then is not None:
            then(session)
        held = HopFacts.saved(saved) if relay is not None else None
        return Next(NextKind.HOP, number, hop_slots(qdicts, engines, saved.tools)), held

    with services.session() as session:
        with repo.atomic(session):
            if first is not None:
                first(session)
            stored = tool_step.stored_tools(services, session, tenant_id=inv.tenant_id)
            if not stored:
                nxt, held = save(session, [])
            elif trace is not None:  # committed with `first`'s writes
                trace.write(session)
        if stored:
            tools = tool_step.plan_tools(services, inv_id, number, stored)
            with repo.atomic(session):
                nxt, held = save(session, tools)
    if relay is not None and held is not None:  # committed
        relay.planned(inv, held)
    return nxt
