"""The answer step: final ranking, compression, an extractive cited answer (or a refusal); the investigation
ends; its deliveries are handed on."""

from __future__ import annotations

import dataclasses

from bootstrap import Services
from investigation import loop
from investigation.state import RetrievalScope, Route, RouteDecision, Status, StopReason
from investigation.tools.evidence import admit_gaps
from storage import repositories as repo
from tasks import tool_step
from tasks.facts import Facts, HopFacts, evidence_of
from tasks.fail_step import fail
from tasks.llm_usage import LLM_OUT, bound_reasoner, llm_stop_reason, record_llm
from tasks.next import Next, NextKind
from tasks.relay import Relay
from tasks.trace import pending_deliveries, synthesis_event


def synthesize(services: Services, inv_id: str, *, relay: Relay | None = None) -> Next:
    """Final ranking, compression, extractive cited answer (or refusal); finish; hand to delivery.
    With a `relay` (the inline executor): what the last reducer, in this process, left in the database, so
    only the status is read, and the budget's count as the last hop's searches left it (nothing is charged
    after them), so it is not read from Redis."""
    known = relay.take_known() if relay is not None else None
    gathered = relay.gathered if relay is not None else None
    # Load.
    with services.session() as session:
        if known is not None:
            status, facts = repo.investigation_status(session, investigation_id=inv_id), known.facts
        else:
            inv = repo.get_investigation(session, investigation_id=inv_id)
            status, facts = inv.status, Facts.of(inv)
        if Status(status).terminal:
            return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))
        if known is not None:
            evidence, hops = list(known.evidence), list(known.hops)
        else:
            evidence = evidence_of(repo.list_evidence(session, investigation_id=inv_id))
            hops = [HopFacts.of(h) for h in repo.list_hops(session, investigation_id=inv_id)]
        question = facts.question
        route = RouteDecision(route=Route(facts.route or "lookup"), reason=facts.route_reason or "")
        reasoner = bound_reasoner(services, session, facts)
        scope = RetrievalScope.of(facts.audience, facts.principals)
    last = next((h.decision for h in reversed(hops) if h.decision), None) or {}

    # Domain.
    s = services.settings
    try:
        final = loop.finish(reasoner, question=question, route=route, evidence=evidence,
                            k=s.limits.final_k, token_budget=s.limits.evidence_token_budget, scope=scope,
                            searched=facts.subqueries)
    except LLM_OUT as exc:
        reason = record_llm(services, inv_id, reasoner, "synthesize") or llm_stop_reason(exc)
        return fail(services, inv_id, reason=reason, error=f"synthesis: {exc}"[:500])
    llm_stop = record_llm(services, inv_id, reasoner, "synthesize")
    # A tool that could not be reached is a gap the answer admits, never a silent omission.
    # (Only a hop that planned tools can have tool calls to admit: no read of the trace otherwise.)
    gaps = tool_step.gaps(services, inv_id) if any(h.tools for h in hops) else []
    final = dataclasses.replace(final, answer=admit_gaps(final.answer, gaps))
    stop_reason = llm_stop or str(last.get("reason") or StopReason.SUFFICIENT)
    citations = [c.model_dump(mode="json") for c in final.answer.citations]
    retrieval_calls = (int(gathered.usage["retrieval_calls"]) if gathered is not None
                       else int(services.state.usage(inv_id)["retrieval_calls"]))

    # Persist: the final counts, the terminal status (one UPDATE) and its event: one commit; then return the
    # deliveries to make, read in the same transaction.
    with services.session() as session, repo.atomic(session):
        repo.finish_investigation(
            session, investigation_id=inv_id, status=final.status.value, stop_reason=stop_reason,
            answer=final.answer.text, citations=citations, caveat=final.answer.caveat,
            final_evidence_ids=[e.id for e in final.selected], evidence_tokens=final.evidence_tokens,
            counts={"hops": len(hops), "retrieval_calls": retrieval_calls},
            event=synthesis_event(inv_id, status=final.status.value, answer=final.answer.text,
                                  citations=citations, caveat=final.answer.caveat,
                                  evidence_tokens=final.evidence_tokens,
                                  selected=[e.id for e in final.selected]))
        return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))
