"""The steps of an investigation as plain functions: load by id → call the domain → persist → return ids.

Celery tasks (`tasks.celery_tasks`) and the in-process executor (`tasks.inline`) call exactly these, so
both executors run the same code path. Every step is idempotent on (investigation, hop, step): a
redelivered task finds its own earlier writes and returns the same `Next`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from bootstrap import Services
from investigation import loop
from investigation.errors import PermanentError, SleuthError
from investigation.ports import Reasoner
from investigation.state import (
    Evidence,
    Grade,
    HopState,
    LoopAction,
    LoopDecision,
    Mode,
    Passage,
    Plan,
    RetrievalScope,
    Route,
    RouteDecision,
    Status,
    StopReason,
    SubQuery,
    Visibility,
)
from investigation.tools.evidence import admit_gaps
from storage import repositories as repo
from storage.hits import SlotHits
from storage.models import Hop, Investigation
from storage.redis_state import CacheQuery, Gathered, SlotEnd, SlotOutcome
from tasks import tool_step
from tasks.llm_usage import LLM_OUT, bound_reasoner, llm_stop_reason, record_llm

log = logging.getLogger(__name__)


class NextKind(StrEnum):
    """What the canvas runs after a step (`tasks.workflow.follow`)."""

    START = "start"
    HOP = "hop"
    SYNTHESIZE = "synthesize"
    DELIVER = "deliver"
    DONE = "done"


@dataclass(frozen=True)
class Next:
    """What to run after a step: a hop's retrievals (+ reducer), synthesis, deliveries, or nothing."""

    kind: NextKind
    hop: int = 0
    slots: tuple[tuple[int, str], ...] = ()  # (sub-query index, engine) pairs of the hop
    deliveries: tuple[str, ...] = ()
    # What the step left in the database, for the next step in this process (asked for with `carry`); never
    # sent to another process.
    known: Known | None = field(default=None, compare=False, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "hop": self.hop, "slots": [list(s) for s in self.slots],
                "deliveries": list(self.deliveries)}


@dataclass(frozen=True, slots=True)
class Facts:
    """The columns of an investigation the steps read after the intake, as its row has them (`of`), or as the
    step before, in this process, wrote them (`Known`)."""

    id: str
    tenant_id: str
    question: str
    mode: str
    audience: str
    principals: list[str]
    plan: dict[str, Any] | None
    subqueries: list[str]
    route: str | None
    route_reason: str | None

    @classmethod
    def of(cls, inv: Investigation) -> Facts:
        return cls(id=inv.id, tenant_id=inv.tenant_id, question=inv.question, mode=inv.mode, audience=inv.audience,
                   principals=list(inv.principals or ()), plan=inv.plan, subqueries=list(inv.subqueries),
                   route=inv.route, route_reason=inv.route_reason)


@dataclass(frozen=True, slots=True)
class HopFacts:
    """The columns of a hop the steps read (its state and decision as the step before left them)."""

    number: int
    queries: list[dict[str, Any]]
    engines: list[str]
    tools: list[dict[str, Any]]
    decision: dict[str, Any] | None = None

    @classmethod
    def of(cls, hop: Hop) -> HopFacts:
        return cls(number=hop.number, queries=list(hop.queries), engines=list(hop.engines),
                   tools=list(hop.tools or []), decision=hop.decision)

    @classmethod
    def saved(cls, hop: Hop) -> HopFacts:
        """A hop as a read of its row gives it back: its JSON columns through JSON (a query's kind, an enum
        member when the hop was built, reads back as its value)."""
        return cls(hop.number, *_as_read([hop.queries, hop.engines, hop.tools or [], hop.decision]))


@dataclass(frozen=True, slots=True)
class Known:
    """What a step of this process left in the database once it committed, as the next step would read it back:
    the investigation's columns (`facts`), its hops in order, and its evidence in `list_evidence`'s order (hop,
    then score descending, then the order written). The inline executor hands it on (`Next.known`, then
    `Handoff.known`, `synthesize(known=...)`), and the next step reads only what another process may have
    changed since — the investigation's status and the hop's state (`repo.step_state`) — instead of the rows
    and the evidence (~1 ms of a two-hop investigation's CPU; docs/performance.md, twenty-fifth pass)."""

    facts: Facts
    hops: tuple[HopFacts, ...]
    evidence: tuple[Evidence, ...]

    def hop(self, number: int) -> HopFacts | None:
        return next((h for h in self.hops if h.number == number), None)


def _evidence_after(evidence: Sequence[Evidence], new: Sequence[Evidence], inserted: int) -> tuple[Evidence, ...] | None:
    """The evidence `list_evidence` reads once `new` has been written (`repo.add_evidence`, which inserted
    `inserted` rows) after `evidence` (in its order). None when that cannot be known for sure: a row of `new`
    not inserted (its id was taken: the stored row is another), or a score the database would not give back as
    it is (SQLite stores -0.0 as 0.0 and NaN as NULL)."""
    first: dict[str, Evidence] = {}
    for e in new:  # as `add_evidence`: one row per id, the first
        first.setdefault(e.id, e)
    if inserted != len(first) or not all(_reads_back(e.score) for e in first.values()):
        return None
    # A stable sort: rows of equal hop and score stay in the order written (the database's id order).
    return tuple(sorted([*evidence, *first.values()], key=lambda e: (e.hop, -e.score)))


def _reads_back(score: float) -> bool:
    """Whether a REAL column gives `score` back as it is: not NaN or an infinity, not -0.0."""
    return math.isfinite(score) and (score != 0 or math.copysign(1.0, score) > 0)


@dataclass
class Handoff:
    """What a hop searched in this process hands its reducer here (`retrieve_many(handoff=...)`, then
    `reduce(handoff=...)`; the inline executor): the searches' trace events, for the reduction's transaction,
    and, when the searches were every slot of the hop, what the reducer would read back from Redis in two
    round trips (`gathered`: read by the round trip that parked the results, `RedisState.slots_end`); and
    what the step that planned the hop left in the database (`known`)."""

    events: list[repo.NewEvent] = field(default_factory=list)
    gathered: Gathered | None = None
    known: Known | None = None


def _slots(queries: list[dict[str, Any]], engines: list[str],
           tools: list[dict[str, Any]] | None = None) -> tuple[tuple[int, str], ...]:
    """The hop's chord slots: every sub-query × engine, then one slot per planned tool call."""
    return tuple((i, e) for i in range(len(queries)) for e in engines) + tool_step.tool_slots(tools or [])


def hop_marker(inv_id: str, number: int) -> str:
    """The once-marker of a hop's charge (`RedisState.charge_once`, `slots_begin(charge_hop=...)`): a
    redelivered step, or a step and the hop's searches, never charge the hop twice."""
    return f"{inv_id}:hop-charged:{number}"


def _limits(services: Services, inv: Investigation) -> dict[str, int]:
    """The investigation's budget as intake stored it (`app.intake.effective_budget`); rows written
    before budgets were stored whole fall back to the server defaults for a missing limit."""
    s = services.settings
    limits = {"max_hops": s.max_hops, "max_retrieval_calls": s.max_retrieval_calls,
              "max_llm_tokens": s.max_llm_tokens, "deadline_seconds": s.deadline_seconds}
    limits.update({k: int(v) for k, v in (inv.budget or {}).items() if k in limits and v is not None})
    if inv.mode == Mode.SINGLE_SHOT.value:
        limits["max_hops"] = 1  # what single-shot means, whatever a budget says
    return limits


def _event(services: Services, inv_id: str, step_key: str, kind: str, hop: int = 0, **data: Any) -> None:
    with services.session() as session:
        repo.add_event(session, investigation_id=inv_id, step_key=step_key, kind=kind, hop=hop, data=data)


class _Trace:
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


def _synthesis_event(inv_id: str, **data: Any) -> repo.NewEvent:
    """The answer step's trace event, written with the terminal status in one transaction."""
    return repo.new_event(investigation_id=inv_id, step_key="synthesis", kind="synthesis", data=data)


def _pending(session: Any, inv_id: str) -> tuple[str, ...]:
    return tuple(d.id for d in repo.list_deliveries(session, investigation_id=inv_id) if d.status == "pending")


def _deadline_ts(inv: Investigation) -> float:
    return inv.deadline_at.replace(tzinfo=UTC).timestamp()


def start(services: Services, inv_id: str, *, charge_later: bool = False, carry: bool = False) -> Next:
    """Route and plan; answer greetings at once; otherwise plan hop 1. `charge_later`: the caller runs the
    hop's searches next, in this process, and has them charge the hop (`hop_marker`) in their first
    round trip instead of one of its own here (the inline executor). `carry`: the next step runs in this
    process and is handed what this one wrote (`Next.known`)."""
    # The checks and the move to running: one transaction (the UPDATE returns the row it wrote).
    with services.session() as session, repo.atomic(session):
        inv = repo.get_investigation(session, investigation_id=inv_id)
        if Status(inv.status).terminal:
            return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))
        existing = repo.get_hop(session, investigation_id=inv_id, number=1)
        if existing is not None:  # redelivered after hop 1 was planned
            if not charge_later:  # (a no-op unless it was planned to be charged by searches that never ran)
                services.state.charge_once(inv_id, hop_marker(inv_id, 1), "hops")
            return Next(NextKind.HOP, 1, _slots(existing.queries, existing.engines, existing.tools))
        inv = repo.update_investigation(session, investigation_id=inv_id, status=Status.RUNNING.value)
    question, mode = inv.question, Mode(inv.mode)
    facts = Facts.of(inv)
    # Hop 1 always searches the question itself (`loop.start`), unless the route answers or refuses it
    # without retrieval: its embedding starts now, while the step routes and plans.
    services.prepare_queries([question])
    limits = _limits(services, inv)
    services.state.init_budget(
        inv_id, max_hops=limits["max_hops"], max_retrieval_calls=limits["max_retrieval_calls"],
        max_llm_tokens=limits["max_llm_tokens"], deadline_ts=_deadline_ts(inv))
    reasoner: Reasoner | None = None
    with services.session() as session:
        try:
            reasoner = bound_reasoner(services, session, facts)
        except PermanentError as exc:  # e.g. SLEUTH_LLM=anthropic without a key: fail clearly, at once
            error = str(exc)
    if reasoner is None:
        return fail(services, inv_id, reason=StopReason.LLM_UNAVAILABLE, error=error)

    try:
        outcome = loop.start(reasoner, question=question, mode=mode)
    except LLM_OUT as exc:
        reason = record_llm(services, inv_id, reasoner, "start") or llm_stop_reason(exc)
        return fail(services, inv_id, reason=reason, error=str(exc)[:500])
    record_llm(services, inv_id, reasoner, "start")
    trace = _Trace(inv_id)
    trace.add("route", "route", route=outcome.route.route.value, reason=outcome.route.reason,
              confidence=outcome.route.confidence, mode=mode.value)
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
                event=_synthesis_event(inv_id, status=status.value, answer=answer.text if answer else None,
                                       citations=[]))
            return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))

    plan = outcome.plan
    services.prepare_queries([q.text for q in plan.subqueries])
    trace.add("plan", "plan", original=plan.original, plan_kind=plan.kind,
              subqueries=[q.model_dump() for q in plan.subqueries])

    after = _with_queries(facts, plan.subqueries, route=outcome.route, plan=plan)

    def write_plan(session: Any) -> None:  # its events go with the hop's (`_plan_hop`'s `trace`)
        _record_hop_queries(session, after, 1, first_hop=True)

    return _plan_hop(services, after, 1, list(plan.subqueries), first=write_plan, trace=trace,
                     charge_later=charge_later, carry=carry)


def _with_queries(held: Facts, queries: Sequence[SubQuery], *, route: RouteDecision | None = None,
                  plan: Plan | None = None) -> Facts:
    """The investigation once hop `queries` are recorded (`_record_hop_queries`): its running list of
    sub-queries, and at hop 1 its route and plan. `held` is what this step read or wrote: while a step runs no
    other step writes its sub-queries (start runs before any hop; a hop's reducer holds its lease)."""
    changes: dict[str, Any] = {"subqueries": list(held.subqueries) + [q.text for q in queries
                                                                      if q.text not in held.subqueries]}
    if route is not None:
        changes.update(route=route.route.value, route_reason=route.reason)
    if plan is not None:
        changes["plan"] = plan.model_dump(mode="json")
    return dataclasses.replace(held, **changes)


def _record_hop_queries(session: Any, after: Facts, number: int, *, first_hop: bool = False, **counts: int) -> None:
    """Write what `_with_queries` gave (`after`) and the hop count (`counts`: other counters to set in the same
    UPDATE), before the hop's tools are planned: tool policy reads the route."""
    fields: dict[str, Any] = {"subqueries": list(after.subqueries), "hops": number, **counts}
    if first_hop:
        fields.update(route=after.route, route_reason=after.route_reason, plan=after.plan)
    repo.set_investigation(session, investigation_id=after.id, **fields)


def _plan_hop(services: Services, inv: Facts, number: int, queries: list[SubQuery], *,
              first: Callable[[Any], object] | None = None, then: Callable[[Any], object] | None = None,
              trace: _Trace | None = None, charge_later: bool = False, carry: bool = False) -> Next:
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
    principals never change). With `carry`, the `Next` holds `inv` and the hop as saved (`Known`: the caller
    adds the hops before and the evidence)."""
    inv_id = inv.id
    engines = list(services.backends)
    qdicts = [q.model_dump() for q in queries]
    if not charge_later:
        services.state.charge_once(inv_id, hop_marker(inv_id, number), "hops")  # a redelivered step: never twice

    def save(session: Any, tools: list[dict[str, Any]]) -> Next:
        saved = repo.save_hop(session, investigation_id=inv_id, number=number, queries=qdicts,
                              engines=engines, tools=tools)  # a redelivered step keeps the first plan
        # This process's slots of the hop then read no plan (kept once the transaction has committed).
        repo.remember_plan(session, investigation_id=inv_id, number=number, tenant_id=inv.tenant_id,
                           audience=inv.audience, principals=list(inv.principals or ()),
                           queries=[str(q["text"]) for q in saved.queries])
        events = trace if trace is not None else _Trace(inv_id)
        events.add(f"hop:{number}", "hop", hop=number, queries=[q.text for q in queries], engines=engines,
                   tools=tools)
        events.write(session)
        if then is not None:
            then(session)
        known = Known(inv, (HopFacts.saved(saved),), ()) if carry else None
        return Next(NextKind.HOP, number, _slots(qdicts, engines, saved.tools), known=known)

    with services.session() as session:
        with repo.atomic(session):
            if first is not None:
                first(session)
            stored = tool_step.stored_tools(services, session, tenant_id=inv.tenant_id)
            if not stored:
                return save(session, [])
            if trace is not None:  # committed with `first`'s writes
                trace.write(session)
        tools = tool_step.plan_tools(services, inv_id, number, stored)
        with repo.atomic(session):
            return save(session, tools)


def retrieve(services: Services, inv_id: str, hop: int, index: int, engine: str) -> dict[str, Any]:
    """One sub-query on one engine (a Celery retrieval task). Results go to Redis (the task returns only a
    summary)."""
    return retrieve_many(services, inv_id, hop, [(index, engine)])[0]


def retrieve_many(services: Services, inv_id: str, hop: int, slots: Sequence[tuple[int, str]], *,
                  run: Callable[..., Any] = map, every_slot: bool = False, charge_hop: str = "",
                  found: Callable[[Sequence[Passage]], None] | None = None,
                  handoff: Handoff | None = None) -> list[dict[str, Any]]:
    """Search slots (sub-query index, engine) of one hop, each as a retrieval task would, in one go: one read
    of the plan, one Redis round trip before the searches (`RedisState.slots_begin`) and one after (their
    results parked, `slots_end`), their trace events in one transaction. `run` maps the searches (a thread
    pool's `map`: in parallel; the inline executor sends a hop's searches this way); `found`, if given, gets
    each search's passages as soon as it has them (from the thread that searched); `handoff`, if given,
    gets the searches' trace events for this process's reducer to write with the hop's reduction
    (`reduce(handoff=...)`) instead of their own transaction, and, when `slots` are every slot of the hop
    (`every_slot`), what that reducer would read from Redis. `charge_hop` (`hop_marker`): the hop's own
    charge, if not made yet, rides on the round trip before the searches. Returns each slot's summary, in
    order."""
    if not slots:
        return []
    with services.session() as session:  # read once per hop and process (repo.planned_hop)
        planned = repo.planned_hop(session, investigation_id=inv_id, number=hop)
    for index, engine in slots:
        if planned is None or index >= len(planned.queries):
            raise LookupError(f"hop {hop} slot {index}:{engine} of {inv_id} was never planned")
    assert planned is not None  # checked for each slot above (and there is at least one)
    tenant = planned.tenant_id
    scope = RetrievalScope.of(planned.audience, list(planned.principals))
    k = services.settings.retrieve_k
    terms = scope.cache_terms()
    acl = None if terms is None else tuple(terms)
    names = [f"{index}:{engine}" for index, engine in slots]
    caches = [CacheQuery(tenant=tenant, engine=engine, query=planned.queries[index], k=k, acl=acl,
                         version=planned.corpus_version) for index, engine in slots]
    if services.settings.debug_retrieve_delay_ms:
        time.sleep(services.settings.debug_retrieve_delay_ms / 1000)
    started = time.perf_counter()
    # One Redis round trip: each slot's parked result (a redelivered task), the deadline, one retrieval call
    # charged, the cached hits of the corpus version read when the hop was planned (hits found before an
    # ingest are never cached as new).
    begins = services.state.slots_begin(inv_id, hop, list(zip(names, caches, strict=True)), now=time.time(),
                                        charge_hop=charge_hop, read_cache=services.settings.subquery_cache_ttl > 0)
    todo = [i for i, begin in enumerate(begins) if begin.parked is None]

    def search(i: int) -> tuple[SlotEnd, repo.NewEvent]:
        cache, begin = caches[i], begins[i]
        passages: list[Passage] = []
        error: str | None = None
        to_cache = begin.outcome is SlotOutcome.MISS  # found by this search (not cached, not refused, no error)
        if begin.outcome is SlotOutcome.DEADLINE:
            error = "deadline"
        elif begin.outcome is SlotOutcome.BUDGET:
            error = "retrieval_budget"
        elif begin.cached is not None:
            passages = begin.cached
        else:
            try:
                passages = services.backends[cache.engine].search(tenant, cache.query, k, acl=scope.acl,
                                                                  visibility=scope.visibility)
            except SleuthError as exc:  # the hop degrades: this engine's evidence is missing, recorded
                error, to_cache = f"{type(exc).__name__}: {exc}", False
            except Exception as exc:  # an engine bug degrades the hop too: it never kills the run
                log.exception("retrieval %s of %s hop %s crashed", names[i], inv_id, hop)
                error, to_cache = f"{type(exc).__name__}: {exc}"[:500], False
        if found is not None and passages:
            found(passages)
        hits = SlotHits(query=cache.query, engine=cache.engine, passages=tuple(passages), error=error,
                        cached=begin.outcome is SlotOutcome.HIT,
                        ms=round((time.perf_counter() - started) * 1000, 2))
        event = repo.new_event(investigation_id=inv_id, step_key=f"retrieve:{hop}:{names[i]}", kind="retrieval",
                               hop=hop, data={"engine": cache.engine, "query": cache.query,
                                              "ids": [p.chunk_id for p in passages], "ms": hits.ms,
                                              "cached": hits.cached, "error": error})
        return SlotEnd(names[i], hits, cache if to_cache else None, begin.version), event

    searched = list(run(search, todo))
    ends = [end for end, _ in searched]
    parked = {names[i]: begin.parked for i, begin in enumerate(begins) if begin.parked is not None}
    gathered = services.state.slots_end(inv_id, hop, ends, ttl=services.settings.subquery_cache_ttl,
                                        gather=parked if handoff is not None and every_slot else None)
    if handoff is not None:
        handoff.events.extend(event for _, event in searched)
        handoff.gathered = gathered
    elif searched:
        with services.session() as session:
            repo.add_events(session, [event for _, event in searched])
    results = {i: parked[names[i]] for i in range(len(names)) if names[i] in parked}
    results.update((i, end.hits) for i, end in zip(todo, ends, strict=True))
    return [{"slot": names[i], "hits": len(results[i].passages), "error": results[i].error} for i in range(len(names))]


def _evidence_of(records: list[Any]) -> list[Evidence]:
    return [Evidence(id=r.evidence_id, chunk_id=r.chunk_id, source_id=r.source_id, title=r.title,
                     text=r.text, score=r.score, grade=Grade(r.grade), hop=r.hop, query=r.query, url=r.url,
                     visibility=Visibility(r.visibility), flagged=r.flagged)
            for r in records]


def _next_after(services: Services, inv_id: str, decision: dict[str, Any], hop: int, *, charge: bool) -> Next:
    """What a reducer of a hop reduced before returns. `charge`: the next hop's charge is this step's (not its
    searches', `charge_later`): made if it never was (planned for searches that never ran)."""
    if decision.get("action") == LoopAction.CONTINUE:
        with services.session() as session:
            nxt = repo.get_hop(session, investigation_id=inv_id, number=hop + 1)
        if nxt is not None:
            if charge:
                services.state.charge_once(inv_id, hop_marker(inv_id, hop + 1), "hops")
            return Next(NextKind.HOP, hop + 1, _slots(nxt.queries, nxt.engines, nxt.tools))
    return Next(NextKind.SYNTHESIZE, hop)


def reduce(services: Services, inv_id: str, hop: int, *, owner: str | None = None,
           handoff: Handoff | None = None) -> Next:
    """Fuse, dedup, grade against the original question, judge sufficiency, decide continue/stop.

    `owner` (the Celery message id) claims the hop first (`tasks.claims`): of two reducers of one hop
    running at once, or one after the other from different messages, only one advances the loop; the
    other returns DONE. The in-process executor (one driver per investigation) passes no owner, and what
    the hop's searches handed on (`retrieve_many(handoff=...)`): their events are written first in the
    reduction's transaction, or on their own when the reduction writes nothing (or fails); what they
    gathered is not read from Redis again."""
    if owner is None or not services.settings.redis_url:
        pending = list(handoff.events) if handoff is not None else []
        try:
            nxt = _reduce(services, inv_id, hop, pending, handoff)
        except BaseException:
            write_events(services, pending, quietly=True)
            raise
        write_events(services, pending)  # a reduction that wrote nothing: the investigation was over, …
        return nxt
    from tasks.claims import Claim, HopLease

    key = f"{services.settings.redis_prefix}:lease:reduce:{inv_id}:{hop}"
    with HopLease(services.redis, key, owner) as lease:
        if lease.claim in (Claim.ACQUIRED, Claim.MINE_DONE):
            return _reduce(services, inv_id, hop, [])
    log.info("reducer %s of %s hop %s stands down: %s", owner, inv_id, hop, lease.claim)
    _event(services, inv_id, f"reduce-dup:{hop}:{owner}", "duplicate_reducer", hop=hop, owner=owner,
           claim=str(lease.claim))
    return Next(NextKind.DONE, hop)


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


def _reduce(services: Services, inv_id: str, hop: int, pending: list[repo.NewEvent],
            handoff: Handoff | None = None) -> Next:
    # Handed on by this process's hop (the inline executor): what its searches gathered; the next hop's
    # searches run here too, and they charge it (`charge_later`).
    gathered = handoff.gathered if handoff is not None else None
    # … and what the step that planned the hop left in the database: then only the status and the hop's state
    # are read (what another process may have changed since), not the rows and the evidence.
    known = handoff.known if handoff is not None else None
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
            found = None if Status(status).terminal else repo.get_hop(session, investigation_id=inv_id, number=hop)
            state, stands = (found.state, found.decision) if found is not None else (None, None)
            row = HopFacts.of(found) if found is not None else None
        if Status(status).terminal:
            return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))
        if state is None or row is None:
            raise LookupError(f"hop {hop} of {inv_id} was never planned")
        if state == HopState.REDUCED and stands is not None:
            return _next_after(services, inv_id, stands, hop, charge=handoff is None)
        if evidence is None:
            evidence = _evidence_of(repo.list_evidence(session, investigation_id=inv_id))
        question, mode = facts.question, Mode(facts.mode)
        plan = Plan.model_validate(facts.plan) if facts.plan else Plan(original=question, subqueries=())
        asked = list(facts.subqueries)
        queries, engines, tools = list(row.queries), list(row.engines), list(row.tools)
        reasoner = bound_reasoner(services, session, facts)
        scope = RetrievalScope.of(facts.audience, facts.principals)

    # The slots are done: neither the results nor the usage change now.
    stored, usage = ((gathered.hits, gathered.usage) if gathered is not None
                     else services.state.hop_results(inv_id, hop))
    results = []
    for index, engine in _slots(queries, engines, tools):
        parked = stored.get(f"{index}:{engine}")
        if parked is None:
            query = (tool_step.tool_query(engine) if tool_step.is_tool_engine(engine)
                     else str(queries[index]["text"]))
            results.append(loop.SlotResult(query=query, engine=engine, passages=[], error="missing result"))
            continue
        results.append(loop.SlotResult(query=parked.query, engine=engine, error=parked.error,
                                       passages=list(parked.passages)))
    for parked in tool_step.related_slots(stored):  # documents about a tool's finding
        results.append(loop.SlotResult(query=parked.query, engine=parked.engine, error=None,
                                       passages=list(parked.passages)))
    candidate_ids = sorted({p.chunk_id for r in results for p in r.passages})
    fresh = (set(gathered.fresh) if gathered is not None and gathered.candidates == tuple(candidate_ids)
             else services.state.first_seen(inv_id, hop, candidate_ids))
    already_seen = set(candidate_ids) - fresh
    budget = loop.BudgetSnapshot(
        hops_done=hop, max_hops=int(usage["max_hops"]), retrieval_calls=int(usage["retrieval_calls"]),
        max_retrieval_calls=int(usage["max_retrieval_calls"]), llm_tokens=int(usage["llm_tokens"]),
        max_llm_tokens=int(usage["max_llm_tokens"]),
        seconds_left=float(usage["deadline_ts"]) - time.time())
    try:
        out = loop.reduce_hop(reasoner, question=question, plan=plan, hop=hop, mode=mode,
                              results=results, already_seen=already_seen, evidence=evidence, asked=asked,
                              budget=budget, scope=scope)
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
    trace = _Trace(inv_id)
    trace.add(f"fuse:{hop}", "fusion", hop=hop, fused=[p.chunk_id for p in out.fused],
              dedup_hits=out.dedup_hits,
              errors={f"{r.engine}:{r.query}": r.error for r in results if r.error})
    trace.add(f"grade:{hop}", "grades", hop=hop,
              grades=[{"id": e.id, "source_id": e.source_id, "grade": e.grade.value, "score": round(e.score, 4),
                       **({"flagged": True} if e.flagged else {}),
                       **({"visibility": e.visibility.value} if e.visibility.value != "public" else {})}
                      for e in out.new_evidence])
    trace.add(f"judge:{hop}", "judgment", hop=hop, **out.judgment.model_dump(mode="json"))
    trace.add(f"decide:{hop}", "decision", hop=hop, **decision)

    inserted, stood = 0, False  # what the writes below did, for what this step hands on (`carry`)

    # The hop's search events first, then the reduction's: one INSERT with the next hop's, when there is one.
    trace.events[:0] = pending

    def write_hop(session: Any) -> None:  # the hop's evidence (its events go with `trace`)
        nonlocal inserted
        repo.after_commit(session, pending.clear)  # written: not again by `reduce` if something fails after
        inserted = repo.add_evidence(session, investigation_id=inv_id, evidence=out.new_evidence)

    def mark_reduced(session: Any) -> None:  # the first decision stands (a redelivered reducer's is not written)
        nonlocal stood
        stood = repo.mark_hop_reduced(session, investigation_id=inv_id, number=hop, decision=decision) == decision

    # Handed what was known, hand on what is known now: the decision as it stands, the evidence as stored.
    carry = known is not None and planned is not None

    def known_after(facts_now: Facts, new_hops: tuple[HopFacts, ...] = ()) -> Known | None:
        if not (carry and stood and known is not None):
            return None
        stored = _evidence_after(evidence, out.new_evidence, inserted)
        reduced = HopFacts(row.number, row.queries, row.engines, row.tools, _as_read(decision))
        hops = tuple(reduced if h.number == hop else h for h in known.hops)
        return None if stored is None else Known(facts_now, (*hops, *new_hops), stored)

    if not go_on:
        decision["action"] = "stop"
        # The hop's writes, the calls and the decision in one transaction.
        with services.session() as session, repo.atomic(session):
            write_hop(session)
            trace.write(session)
            repo.set_investigation(session, investigation_id=inv_id, retrieval_calls=budget.retrieval_calls)
            mark_reduced(session)
        return Next(NextKind.SYNTHESIZE, hop, known=known_after(facts))

    after = _with_queries(facts, chosen.next_queries)

    def write_hop_and_next(session: Any) -> None:  # … and the next hop's queries with the calls: one UPDATE
        write_hop(session)
        _record_hop_queries(session, after, hop + 1, retrieval_calls=budget.retrieval_calls)

    # The next hop is saved with this hop's decision: a redelivered reducer finds both or neither.
    nxt = _plan_hop(services, after, hop + 1, list(chosen.next_queries), first=write_hop_and_next,
                    then=mark_reduced, trace=trace, charge_later=handoff is not None, carry=carry)
    return dataclasses.replace(nxt, known=known_after(after, nxt.known.hops)) if nxt.known is not None else nxt


def _as_read(value: Any) -> Any:
    """`value` as a JSON column gives it back once written."""
    return json.loads(json.dumps(value))


def _decision_json(decision: LoopDecision) -> dict[str, Any]:
    return {"action": decision.action.value, "reason": str(decision.reason), "detail": decision.detail,
            "next_queries": [q.text for q in decision.next_queries]}


def synthesize(services: Services, inv_id: str, *, retrieval_calls: int | None = None,
               known: Known | None = None) -> Next:
    """Final ranking, compression, extractive cited answer (or refusal); finish; hand to delivery.
    `retrieval_calls`: the budget's count as the last hop's searches left it, when the caller has it
    (`Gathered.usage`: nothing is charged after them); read from Redis otherwise. `known`: what the last
    reducer, in this process, left in the database (`Known`): then only the status is read."""
    with services.session() as session:
        if known is not None:
            status, facts = repo.investigation_status(session, investigation_id=inv_id), known.facts
        else:
            inv = repo.get_investigation(session, investigation_id=inv_id)
            status, facts = inv.status, Facts.of(inv)
        if Status(status).terminal:
            return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))
        if known is not None:
            evidence, hops = list(known.evidence), list(known.hops)
        else:
            evidence = _evidence_of(repo.list_evidence(session, investigation_id=inv_id))
            hops = [HopFacts.of(h) for h in repo.list_hops(session, investigation_id=inv_id)]
        question = facts.question
        route = RouteDecision(route=Route(facts.route or "lookup"), reason=facts.route_reason or "")
        reasoner = bound_reasoner(services, session, facts)
        scope = RetrievalScope.of(facts.audience, facts.principals)
    last = next((h.decision for h in reversed(hops) if h.decision), None) or {}
    s = services.settings
    try:
        final = loop.finish(reasoner, question=question, route=route, evidence=evidence,
                            k=s.final_k, token_budget=s.evidence_token_budget, scope=scope)
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
    if retrieval_calls is None:
        retrieval_calls = int(services.state.usage(inv_id)["retrieval_calls"])
    # The final counts, the terminal status (one UPDATE) and its event: one commit; then the deliveries
    # to make, read in the same transaction.
    with services.session() as session, repo.atomic(session):
        repo.finish_investigation(
            session, investigation_id=inv_id, status=final.status.value, stop_reason=stop_reason,
            answer=final.answer.text, citations=citations, caveat=final.answer.caveat,
            final_evidence_ids=[e.id for e in final.selected], evidence_tokens=final.evidence_tokens,
            counts={"hops": len(hops), "retrieval_calls": retrieval_calls},
            event=_synthesis_event(inv_id, status=final.status.value, answer=final.answer.text,
                                   citations=citations, caveat=final.answer.caveat,
                                   evidence_tokens=final.evidence_tokens,
                                   selected=[e.id for e in final.selected]))
        return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))


def fail(services: Services, inv_id: str, *, reason: str, error: str) -> Next:
    """Move a stuck or broken investigation to `failed` (once) and hand it to delivery."""
    # The move and its trace event in one transaction (the event only when this call moved it), then the
    # deliveries to make, read in the same transaction.
    event = repo.new_event(investigation_id=inv_id, step_key=f"fail:{reason}", kind="stop",
                           data={"reason": reason, "error": error, "at": datetime.now(UTC).isoformat()})
    with services.session() as session, repo.atomic(session):
        repo.finish_investigation(session, investigation_id=inv_id, status=Status.FAILED.value,
                                  stop_reason=reason, error=error, event=event)
        return Next(NextKind.DELIVER, deliveries=_pending(session, inv_id))


def overdue(services: Services) -> list[str]:
    """Ids of investigations past their deadline and still not terminal (for the watchdog)."""
    with services.session() as session:
        return repo.list_overdue(session, now=datetime.now(UTC).replace(tzinfo=None))


__all__ = ["Next", "fail", "overdue", "reduce", "retrieve", "start", "synthesize"]
