"""A hop's reducer: fuse, dedup, grade against the original question, judge sufficiency, decide whether to
go on (planning the next hop) or stop (synthesis next). One reducer per hop advances the loop."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from bootstrap import Services
from investigation import loop
from investigation.ports import Reasoner
from investigation.state import (
    Evidence,
    HopState,
    LoopAction,
    LoopDecision,
    Mode,
    Plan,
    RetrievalScope,
    Status,
)
from storage import repositories as repo
from storage.hits import SlotHits
from tasks import tool_step
from tasks.claims import Claim, HopLease
from tasks.facts import Facts, HopFacts, as_read, evidence_of
from tasks.fail_step import fail
from tasks.llm_usage import LLM_OUT, bound_reasoner, llm_stop_reason, record_llm
from tasks.next import Next, NextKind, hop_marker, hop_slots
from tasks.plan_hop import plan_hop, record_hop_queries, with_queries
from tasks.relay import Known, Relay, evidence_after
from tasks.trace import StepTrace, event, pending_deliveries, write_events

log = logging.getLogger(__name__)


def reduce(services: Services, inv_id: str, hop: int, *, owner: str | None = None,
           relay: Relay | None = None) -> Next:
    """Fuse, dedup, grade against the original question, judge sufficiency, decide continue/stop.

    `owner` (the Celery message id) claims the hop first (`tasks.claims`): of two reducers of one hop
    running at once, or one after the other from different messages, only one advances the loop; the
    other returns DONE. The in-process executor (one driver per investigation) passes no owner, and its
    `relay`: the hop's search events are written first in the reduction's transaction, or on their own when
    the reduction writes nothing (or fails); what the searches gathered is not read from Redis again."""
    if owner is None or not services.settings.redis_url:
        pending = relay.take_events() if relay is not None else []
        try:
            nxt = _reduce(services, inv_id, hop, pending, relay)
        except BaseException:
            write_events(services, pending, quietly=True)
            raise
        write_events(services, pending)  # a reduction that wrote nothing: the investigation was over, …
        return nxt
    key = f"{services.settings.redis_prefix}:lease:reduce:{inv_id}:{hop}"
    with HopLease(services.redis, key, owner) as lease:
        if lease.claim in (Claim.ACQUIRED, Claim.MINE_DONE):
            return _reduce(services, inv_id, hop, [], None)
    log.info("reducer %s of %s hop %s stands down: %s", owner, inv_id, hop, lease.claim)
    event(services, inv_id, f"reduce-dup:{hop}:{owner}", "duplicate_reducer", hop=hop, owner=owner,
          claim=str(lease.claim))
    return Next(NextKind.DONE, hop)


def _reduce(
    services: Services, inv_id: str, hop: int, pending: list[repo.NewEvent], relay: Relay | None
) -> Next:
    # Load: what the step that planned the hop left in the database, when it ran in this process (`relay`) …
    known = relay.take_known() if relay is not None else None
    loaded = _load(services, inv_id, hop, known, charge=relay is None)
    if isinstance(loaded, Next):
        return loaded
    facts, row, evidence = loaded.facts, loaded.row, loaded.evidence
    # … and what the hop's searches gathered: the slots are done, neither the results nor the usage change
    # now.
    gathered = relay.gathered if relay is not None else None
    stored, usage = ((gathered.hits, gathered.usage) if gathered is not None
                     else services.state.hop_results(inv_id, hop))
    results = _results(row, stored)
    candidate_ids = sorted({p.chunk_id for r in results for p in r.passages})
    fresh = (set(gathered.fresh) if gathered is not None and gathered.candidates == tuple(candidate_ids)
             else services.state.first_seen(inv_id, hop, candidate_ids))
    budget = loop.BudgetSnapshot(
        hops_done=hop, max_hops=int(usage["max_hops"]), retrieval_calls=int(usage["retrieval_calls"]),
        max_retrieval_calls=int(usage["max_retrieval_calls"]), llm_tokens=int(usage["llm_tokens"]),
        max_llm_tokens=int(usage["max_llm_tokens"]),
        seconds_left=float(usage["deadline_ts"]) - time.time())

    # Domain: fuse, grade, judge, decide.
    question, mode, reasoner = facts.question, Mode(facts.mode), loaded.reasoner
    plan = Plan.model_validate(facts.plan) if facts.plan else Plan(original=question, subqueries=())
    try:
        out = loop.reduce_hop(reasoner, question=question, plan=plan, hop=hop, mode=mode,
                              results=results, already_seen=set(candidate_ids) - fresh, evidence=evidence,
                              asked=list(facts.subqueries), budget=budget, scope=loaded.scope)
    except LLM_OUT as exc:
        reason = record_llm(services, inv_id, reasoner, "reduce", hop) or llm_stop_reason(exc)
        return fail(services, inv_id, reason=reason, error=f"hop {hop}: {exc}"[:500])
    chosen = out.decision
    llm_stop = record_llm(services, inv_id, reasoner, "reduce", hop)
    if llm_stop is not None:  # the heuristic graded/judged this hop; it also writes the answer
        chosen = LoopDecision(action=LoopAction.STOP, reason=llm_stop, detail=(
            f"the LLM is out ({llm_stop}): the heuristic finishes the investigation; the loop had decided "
            f"{out.decision.action} ({out.decision.reason})"))
    decision = _decision_json(chosen)
    go_on = chosen.action is LoopAction.CONTINUE and bool(chosen.next_queries)
    if go_on:  # the next hop's embeddings start now, while this hop's trace is built and written
        services.prepare_queries([q.text for q in chosen.next_queries])
    trace = _trace(inv_id, hop, out, results, decision)

    # Persist: the hop's search events first, then the reduction's (one INSERT with the next hop's, if any).
    trace.events[:0] = pending
    inserted, stood = 0, False  # what the writes below did, for what this step hands on (`relay`)

    def write_hop(session: Any) -> None:  # the hop's evidence (its events go with `trace`)
        nonlocal inserted
        repo.after_commit(session, pending.clear)  # written: not again by `reduce` if something fails after
        inserted = repo.add_evidence(session, investigation_id=inv_id, evidence=out.new_evidence)

    # the first decision stands (a redelivered reducer's is not written)
    def mark_reduced(session: Any) -> None:
        nonlocal stood
        stood = (
            repo.mark_hop_reduced(session, investigation_id=inv_id, number=hop, decision=decision) == decision
        )

    # Handed what was known, hand on what is known now: the decision as it stands, the evidence as stored.
    carry = known is not None and known.hop(hop) is not None

    def known_after(facts_now: Facts, new_hops: tuple[HopFacts, ...] = ()) -> Known | None:
        if not (carry and stood and known is not None):
            return None
        held = evidence_after(evidence, out.new_evidence, inserted)
        reduced = HopFacts(row.number, row.queries, row.engines, row.tools, as_read(decision))
        hops = tuple(reduced if h.number == hop else h for h in known.hops)
        return None if held is None else Known(facts_now, (*hops, *new_hops), held)

    if not go_on:
        decision["action"] = "stop"
        # The hop's writes, the calls and the decision in one transaction.
        with services.session() as session, repo.atomic(session):
            write_hop(session)
            trace.write(session)
            repo.set_investigation(session, investigation_id=inv_id, retrieval_calls=budget.retrieval_calls)
            mark_reduced(session)
        if relay is not None:
            relay.known = known_after(facts)
        return Next(NextKind.SYNTHESIZE, hop)

    after = with_queries(facts, chosen.next_queries)

    def write_hop_and_next(session: Any) -> None:  # … and the next hop's queries with the calls: one UPDATE
        write_hop(session)
        record_hop_queries(session, after, hop + 1, retrieval_calls=budget.retrieval_calls)

    # The next hop is saved with this hop's decision: a redelivered reducer finds both or neither. Its
    # searches run in this process when there is a relay, and charge it then.
    nxt = plan_hop(services, after, hop + 1, list(chosen.next_queries), first=write_hop_and_next,
                   then=mark_reduced, trace=trace, charge_later=relay is not None,
                   relay=relay if carry else None, evidence=[*evidence, *out.new_evidence])
    if relay is not None and relay.known is not None:
        relay.known = known_after(after, relay.known.hops)
    return nxt


def _trace(inv_id: str, hop: int, out: loop.HopOutcome, results: list[loop.SlotResult],
           decision: dict[str, Any]) -> StepTrace:
    """The reduction's trace events: the fusion, the grades, the judgment, the decision."""
    trace = StepTrace(inv_id)
    trace.add(f"fuse:{hop}", "fusion", hop=hop, fused=[p.chunk_id for p in out.fused],
              dedup_hits=out.dedup_hits,
              errors={f"{r.engine}:{r.query}": r.error for r in results if r.error})
    trace.add(
        f"grade:{hop}",
        "grades",
        hop=hop,
        grades=[
            {
                "id": e.id,
                "source_id": e.source_id,
                "grade": e.grade.value,
                "score": round(e.score, 4),
                **({"flagged": True} if e.flagged else {}),
                **({"visibility": e.visibility.value} if e.visibility.value != "public" else {}),
            }
            for e in out.new_evidence
        ],
    )
    trace.add(f"judge:{hop}", "judgment", hop=hop, **out.judgment.model_dump(mode="json"))
    trace.add(f"decide:{hop}", "decision", hop=hop, **decision)
    return trace


def _decision_json(decision: LoopDecision) -> dict[str, Any]:
    return {"action": decision.action.value, "reason": str(decision.reason), "detail": decision.detail,
            "next_queries": [q.text for q in decision.next_queries]}


@dataclass
class _Loaded:
    """What a reducer reads before it decides."""

    facts: Facts
    row: HopFacts
    evidence: list[Evidence]
    reasoner: Reasoner
    scope: RetrievalScope


def _load(services: Services, inv_id: str, hop: int, known: Known | None, *, charge: bool) -> _Loaded | Next:
    """The investigation, the hop and the evidence so far — or the `Next` of a reducer with nothing to do (the
    investigation is over, the hop was reduced before). Handed what the step before wrote (`known`), only the
    status and the hop's state are read: what another process may have changed since. `charge`: a next hop
    planned before is charged by this step (`_next_after`)."""
    planned = known.hop(hop) if known is not None else None
    with services.session() as session:
        evidence: list[Evidence] | None = None
        row: HopFacts | None
        if known is not None and planned is not None:
            status, state, stands = repo.step_state(session, investigation_id=inv_id, number=hop)
            facts, row, evidence = known.facts, planned, list(known.evidence)
        else:
            inv = repo.get_investigation(session, investigation_id=inv_id)
            status, facts = inv.status, Facts.of(inv)
            found = (
                None
                if Status(status).terminal
                else repo.get_hop(session, investigation_id=inv_id, number=hop)
            )
            state, stands = (found.state, found.decision) if found is not None else (None, None)
            row = HopFacts.of(found) if found is not None else None
        if Status(status).terminal:
            return Next(NextKind.DELIVER, deliveries=pending_deliveries(session, inv_id))
        if state is None or row is None:
            raise LookupError(f"hop {hop} of {inv_id} was never planned")
        if state == HopState.REDUCED and stands is not None:
            return _next_after(services, inv_id, stands, hop, charge=charge)
        if evidence is None:
            evidence = evidence_of(repo.list_evidence(session, investigation_id=inv_id))
        return _Loaded(facts, row, evidence, bound_reasoner(services, session, facts),
                       RetrievalScope.of(facts.audience, facts.principals))


def _next_after(services: Services, inv_id: str, decision: dict[str, Any], hop: int, *, charge: bool) -> Next:
    """What a reducer of a hop reduced before returns. `charge`: the next hop's charge is this step's (not its
    searches'): made if it never was (planned for searches that never ran)."""
    if decision.get("action") == LoopAction.CONTINUE:
        with services.session() as session:
            nxt = repo.get_hop(session, investigation_id=inv_id, number=hop + 1)
        if nxt is not None:
            if charge:
                services.state.charge_once(inv_id, hop_marker(inv_id, hop + 1), "hops")
            return Next(NextKind.HOP, hop + 1, hop_slots(nxt.queries, nxt.engines, nxt.tools))
    return Next(NextKind.SYNTHESIZE, hop)


def _results(row: HopFacts, stored: dict[str, SlotHits]) -> list[loop.SlotResult]:
    """Each slot's parked result (a missing one recorded as such), then the documents about a tool's
    finding."""
    results = []
    for index, engine in hop_slots(row.queries, row.engines, row.tools):
        parked = stored.get(f"{index}:{engine}")
        if parked is None:
            query = (tool_step.tool_query(engine) if tool_step.is_tool_engine(engine)
                     else str(row.queries[index]["text"]))
            results.append(loop.SlotResult(query=query, engine=engine, passages=[], error="missing result"))
            continue
        results.append(loop.SlotResult(query=parked.query, engine=engine, error=parked.error,
                                       passages=list(parked.passages)))
    for parked in tool_step.related_slots(stored):  # documents about a tool's finding
        results.append(loop.SlotResult(query=parked.query, engine=parked.engine, error=None,
                                       passages=list(parked.passages)))
    return results
