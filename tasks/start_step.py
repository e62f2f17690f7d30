"""The first step of an investigation: route and plan; answer greetings at once; otherwise plan hop 1."""

from __future__ import annotations

from typing import Any

from bootstrap import Services
from investigation import loop
from investigation.errors import PermanentError
from investigation.ports import Reasoner
from investigation.state import Mode, Status, StopReason
from storage import repositories as repo
from tasks.facts import Facts, deadline_ts, limits
from tasks.fail_step import fail
from tasks.llm_usage import LLM_OUT, bound_reasoner, llm_stop_reason, record_llm
from tasks.next import Next, NextKind, hop_marker, hop_slots
from tasks.plan_hop import plan_hop, record_hop_queries, with_queries
from tasks.relay import Relay
from tasks.trace import StepTrace, pending_deliveries, synthesis_event


def start(services: Services, inv_id: str, *, relay: Relay | None = None) -> Next:
    """Route and plan; answer greetings at once; otherwise plan hop 1. With a `relay` (the inline executor:
    the hop's searches run next, in this process) the searches charge the hop (`hop_marker`) in their first
    round trip instead of a round trip of this step, and the relay is handed what this step wrote."""
    # Load. The checks and the move to running: one transaction (the UPDATE returns the row it wrote).
    with services.session() as session, repo.atomic(session):
        inv = repo.get_investigation(session, investigation_id=inv_id)
        if Status(inv.status).terminal:
            return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))
        existing = repo.get_hop(session, investigation_id=inv_id, number=1)
        if existing is not None:  # redelivered after hop 1 was planned
            if relay is None:  # (a no-op unless it was planned to be charged by searches that never ran)
                services.state.charge_once(inv_id, hop_marker(inv_id, 1), "hops")
            return Next(NextKind.HOP, 1, hop_slots(existing.queries, existing.engines, existing.tools))
        inv = repo.update_investigation(session, investigation_id=inv_id, status=Status.RUNNING.value)
    question, mode = inv.question, Mode(inv.mode)
    facts = Facts.of(inv)
    # Hop 1 always searches the question itself (`loop.start`), unless the route answers or refuses it
    # without retrieval: its embedding starts now, while the step routes and plans.
    services.prepare_queries([question])
    budget = limits(services, inv)
    services.state.init_budget(
        inv_id, max_hops=budget["max_hops"], max_retrieval_calls=budget["max_retrieval_calls"],
        max_llm_tokens=budget["max_llm_tokens"], deadline_ts=deadline_ts(inv))
    reasoner: Reasoner | None = None
    with services.session() as session:
        try:
            reasoner = bound_reasoner(services, session, facts)
        except PermanentError as exc:  # e.g. SLEUTH_LLM=anthropic without a key: fail clearly, at once
            error = str(exc)
    if reasoner is None:
        return fail(services, inv_id, reason=StopReason.LLM_UNAVAILABLE, error=error)

    # Domain: route, and answer or plan.
    try:
        outcome = loop.start(reasoner, question=question, mode=mode)
    except LLM_OUT as exc:
        reason = record_llm(services, inv_id, reasoner, "start") or llm_stop_reason(exc)
        return fail(services, inv_id, reason=reason, error=str(exc)[:500])
    record_llm(services, inv_id, reasoner, "start")
    trace = StepTrace(inv_id)
    trace.add("route", "route", route=outcome.route.route.value, reason=outcome.route.reason,
              confidence=outcome.route.confidence, mode=mode.value)

    # Persist and hand on: an answer without retrieval goes to delivery …
    if outcome.answer is not None or outcome.plan is None:
        answer = outcome.answer
        status = Status.REFUSED if (answer is None or answer.refused) else Status.ANSWERED
        reason = outcome.stop_reason or StopReason.DIRECT
        trace.add("stop", "stop", reason=str(reason), detail="answered without retrieval")
        with services.session() as session, repo.atomic(session):
            trace.write(session)
            repo.set_investigation(session, investigation_id=inv_id, route=outcome.route.route.value,
                                   route_reason=outcome.route.reason)
            repo.finish_investigation(
                session, investigation_id=inv_id, status=status.value, stop_reason=str(reason),
                answer=answer.text if answer else None, citations=[],
                caveat=answer.caveat if answer else None, evidence_tokens=0,
                event=synthesis_event(inv_id, status=status.value, answer=answer.text if answer else None,
                                      citations=[]))
            return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))

    # … a plan becomes hop 1.
    plan = outcome.plan
    services.prepare_queries([q.text for q in plan.subqueries])
    trace.add("plan", "plan", original=plan.original, plan_kind=plan.kind,
              subqueries=[q.model_dump() for q in plan.subqueries])
    after = with_queries(facts, plan.subqueries, route=outcome.route, plan=plan)

    def write_plan(session: Any) -> None:  # its events go with the hop's (`plan_hop`'s `trace`)
        record_hop_queries(session, after, 1, first_hop=True)

    return plan_hop(services, after, 1, list(plan.subqueries), first=write_plan, trace=trace,
                    charge_later=relay is not None, relay=relay)
