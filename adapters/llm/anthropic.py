"""The `anthropic` Reasoner: Claude decides and writes, behind the same port as the heuristic.

A fast model routes, plans, grades a hop's passages in one call, judges sufficiency and writes next-hop
queries (typed tool calls, validated); a stronger model writes the cited answer, streamed. Invalid output
falls back safely, model-written queries pass the no-invented-hop guard, citations are checked with one
repair attempt (`adapters.llm.claude_synthesis`), and every call's usage is logged for `take_usage`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adapters.llm.claude_budget import TokenBudget
from adapters.llm.claude_calls import Events, Invalid, LLMOut
from adapters.llm.claude_synthesis import ClaudeSynthesis
from adapters.llm.claude_transport import (
    Limiter,
    MessagesTransport,
    RateLimits,
    claude_retry_policy,
    make_client,
)
from config.settings import Settings
from heuristic.selection import select_evidence
from investigation import prompts
from investigation.citations import evidence_id
from investigation.errors import PermanentError
from investigation.guards import check_query
from investigation.ports import Reasoner
from investigation.state import (
    Evidence,
    Grade,
    Judgment,
    Passage,
    Plan,
    PlanKind,
    QueryKind,
    Route,
    RouteDecision,
    SubQuery,
)
from investigation.text import fold, query_key, words
from storage.rate_limit import key_id

_GRADE_ORDER = {Grade.CORRECT: 0, Grade.AMBIGUOUS: 1, Grade.INCORRECT: 2}


class ClaudeReasoner(ClaudeSynthesis):
    """Implements `investigation.ports.Reasoner` with Claude; `bind` gives a per-investigation copy."""

    def __init__(
        self,
        transport: MessagesTransport,
        *,
        grade_max_passages: int = 24,
        passage_words: int = 160,
        judge_max_evidence: int = 16,
        evidence_words: int = 110,
        **kwargs: Any,
    ) -> None:
        super().__init__(transport, **kwargs)
        self.grade_max_passages = grade_max_passages
        self.passage_words = passage_words
        self.judge_max_evidence = judge_max_evidence
        self.evidence_words = evidence_words
        self._kwargs = {"grade_max_passages": grade_max_passages, "passage_words": passage_words,
                        "judge_max_evidence": judge_max_evidence, "evidence_words": evidence_words}

    def bind(self, *, budget: TokenBudget, on_event: Events | None = None) -> ClaudeReasoner:
        """A reasoner for one investigation: same client and fallback, its own budget, log and events."""
        return ClaudeReasoner(
            self.transport,
            model_fast=self.model_fast,
            model_synthesis=self.model_synthesis,
            fallback=self.fallback,
            fallback_mode=self.fallback_mode,
            effort_fast=self.effort_fast,
            effort_synthesis=self.effort_synthesis,
            budget=budget,
            on_event=on_event,
            **self._kwargs,
        )

    # -- route and plan ----------------------------------------------------------------------------

    def route(self, question: str) -> RouteDecision:
        try:
            out = self.decide(prompts.route_request(question), prompts.RouteOut)
        except LLMOut as stop:
            return self.finish(stop, "route", lambda: self.fallback.route(question))
        except Invalid as bad:
            return self.safe("route", bad, lambda: self.fallback.route(question), lambda: RouteDecision(
                route=Route.LOOKUP, reason="fallback: router output unusable, retrieving", confidence=0.0))
        return RouteDecision(route=out.route, reason=out.reason, confidence=out.confidence)

    def plan(self, question: str, route: RouteDecision) -> Plan:
        as_is = Plan(original=question, subqueries=(
            SubQuery(text=question, purpose="original question", kind=QueryKind.ORIGINAL),))
        if route.route not in (Route.MULTI_PART, Route.MULTI_HOP):
            return as_is  # one search of the question as written: no call needed
        try:
            out = self.decide(prompts.plan_request(question, route.route), prompts.PlanOut)
        except LLMOut as stop:
            return self.finish(stop, "plan", lambda: self.fallback.plan(question, route))
        except Invalid as bad:
            return self.safe("plan", bad, lambda: self.fallback.plan(question, route), lambda: as_is)
        kind = PlanKind(out.kind) if out.subqueries else PlanKind.AS_IS
        part = QueryKind.PART if kind is PlanKind.DECOMPOSED else QueryKind.OTHER
        subs = [SubQuery(text=s.text.strip(), purpose=s.purpose, kind=part) for s in out.subqueries]
        kept = self._guarded("plan", question, [], subs)
        return Plan(original=question, subqueries=(as_is.subqueries[0], *kept),
                    kind=kind if kept else PlanKind.AS_IS)

    # -- grade, judge, next hop --------------------------------------------------------------------

    def grade(
        self, question: str, passages: Sequence[Passage], hop: int, query_of: dict[str, str]
    ) -> list[Evidence]:
        if not passages:
            return []
        head = list(passages[: self.grade_max_passages])
        labels = {f"P{i}": p for i, p in enumerate(head, start=1)}
        items = [prompts.Fenced(label, p.source_id, p.title, prompts.clip(p.text, self.passage_words),
                                (("found_by", query_of.get(p.chunk_id, question)),))
                 for label, p in labels.items()]

        def heuristic() -> list[Evidence]:
            return self.fallback.grade(question, passages, hop, query_of)

        def ambiguous() -> list[Evidence]:
            return [_evidence(p, Grade.AMBIGUOUS, 0.5, hop, query_of, question) for p in passages]

        try:
            out = self.decide(prompts.grade_request(question, items), prompts.GradesOut)
            by_label = {g.id: g for g in out.grades}
            if len(out.grades) != len(labels) or set(by_label) != set(labels):
                raise Invalid("invalid_output", f"graded {sorted(by_label)[:30]}, expected P1…P{len(labels)}")
        except LLMOut as stop:
            return self.finish(stop, "grade", heuristic)
        except Invalid as bad:
            return self.safe("grade", bad, heuristic, ambiguous)
        self.amend_last(missing_evidence=list(out.missing_evidence), graded=len(head),
                        ungraded=len(passages) - len(head))
        graded = [
            _evidence(p, Grade(by_label[label].grade), by_label[label].relevance, hop, query_of, question)
            for label, p in labels.items()
        ]
        # Passages past the per-hop cap are kept (ranked last), never silently promoted.
        return graded + [_evidence(p, Grade.INCORRECT, 0.0, hop, query_of, question)
                         for p in passages[len(head):]]

    def _relevant(self, evidence: Sequence[Evidence]) -> list[Evidence]:
        kept = [e for e in evidence if e.grade is not Grade.INCORRECT]
        kept.sort(key=lambda e: (_GRADE_ORDER[e.grade], -e.score, e.hop, e.chunk_id))
        return kept[: self.judge_max_evidence]

    def judge(self, question: str, plan: Plan, evidence: Sequence[Evidence]) -> Judgment:
        relevant = self._relevant(evidence)
        if not relevant:  # nothing to judge: no call
            return Judgment(
                sufficient=False,
                missing_information=("no retrieved passage agrees with the question",),
                confidence=0.0,
            )
        items = prompts.evidence_items(relevant, self.evidence_words)
        try:
            out = self.decide(prompts.judge_request(question, plan, items), prompts.JudgmentOut)
        except LLMOut as stop:
            return self.finish(stop, "judge", lambda: self.fallback.judge(question, plan, evidence))
        except Invalid as bad:
            return self.safe(
                "judge",
                bad,
                lambda: self.fallback.judge(question, plan, evidence),
                lambda: Judgment(
                    sufficient=False, missing_information=("judgment unavailable",), confidence=0.0
                ),
            )
        missing = tuple(out.missing_information)
        sufficient = out.sufficient
        if sufficient and not any(e.grade is Grade.CORRECT for e in evidence):
            sufficient, missing = False, (*missing, "no passage is graded correct")
        absent = tuple(name for name in out.absent if name.strip() and fold(name) in fold(question))
        return Judgment(
            sufficient=sufficient,
            answered_subqueries=tuple(out.answered_subqueries),
            missing_information=missing,
            conflicts=tuple(out.conflicts),
            confidence=out.confidence,
            absent=absent,
        )

    def next_queries(self, question: str, plan: Plan, evidence: Sequence[Evidence],
                     asked: Sequence[str], judgment: Judgment) -> list[SubQuery]:
        relevant = self._relevant(evidence)
        if not relevant:
            return []
        spec = prompts.next_queries_request(
            question,
            plan,
            prompts.evidence_items(relevant, self.evidence_words),
            asked,
            judgment.missing_information,
        )

        def heuristic() -> list[SubQuery]:
            return self.fallback.next_queries(question, plan, evidence, asked, judgment)

        try:
            out = self.decide(spec, prompts.NextQueriesOut)
        except LLMOut as stop:
            return self.finish(stop, "next_queries", heuristic)
        except Invalid as bad:
            return self.safe("next_queries", bad, heuristic, list)
        asked_keys = {query_key(q) for q in asked}
        proposed = [SubQuery(text=q.text.strip(), purpose=q.purpose, kind=_query_kind(q.text, judgment),
                             follows=q.follows.strip() or followed_span(q.text, question, evidence))
                    for q in out.queries if query_key(q.text) and query_key(q.text) not in asked_keys]
        kept = self._guarded("next_queries", question, evidence, proposed)
        missing = len(proposed) - len(kept)
        if missing and self.fallback_mode == "heuristic":
            taken = [*asked, *(q.text for q in kept)]
            bridges = self.fallback.next_queries(question, plan, evidence, taken, judgment)[:missing]
            if bridges:
                self.note("next_queries", kind="llm_guard", reason="replaced_by_heuristic_bridge",
                          detail="; ".join(b.text for b in bridges), replacements=[b.text for b in bridges])
            kept += bridges
        return kept

    def _guarded(self, step: str, question: str, evidence: Sequence[Evidence],
                 queries: Sequence[SubQuery]) -> list[SubQuery]:
        """The queries whose names, ids, numbers and dates are grounded; each rejection is traced."""
        kept = []
        for sub in queries:
            verdict = check_query(sub.text, question, evidence)
            if verdict.ok:
                kept.append(sub)
            else:
                self.note(step, kind="llm_guard", reason="invented_terms", query=sub.text,
                          unsupported=list(verdict.unsupported),
                          detail=f"not in the question or graded evidence: {', '.join(verdict.unsupported)}")
        return kept

    def select(
        self, question: str, evidence: Sequence[Evidence], k: int, token_budget: int
    ) -> list[Evidence]:
        return select_evidence(question, evidence, k, token_budget)  # pure ranking + compression, no call


def followed_span(text: str, question: str, evidence: Sequence[Evidence]) -> str:
    """When the model left `follows` empty: the longest run of the query's words that is not only the
    question's words and that a clean passage contains (what the query follows), or ""."""
    tokens, asked = words(text), set(words(question))
    bodies = [f" {' '.join(words(f'{e.title}. {e.text}'))} " for e in evidence if not e.flagged]
    for size in range(len(tokens), 0, -1):
        for start in range(len(tokens) - size + 1):
            span = tokens[start:start + size]
            if not set(span) <= asked and any(f" {' '.join(span)} " in body for body in bodies):
                return " ".join(span)
    return ""


def _query_kind(text: str, judgment: Judgment) -> QueryKind:
    """A next-hop query that names what the judgment found absent is a probe; any other one a bridge."""
    return QueryKind.PROBE if any(fold(name) in fold(text) for name in judgment.absent) else QueryKind.BRIDGE


def _evidence(
    p: Passage, grade: Grade, score: float, hop: int, query_of: dict[str, str], question: str
) -> Evidence:
    return Evidence(id=evidence_id(p.chunk_id), chunk_id=p.chunk_id, source_id=p.source_id, title=p.title,
                    text=p.text, score=round(float(score), 6), grade=grade, hop=hop,
                    query=query_of.get(p.chunk_id, question), url=p.url, visibility=p.visibility)


def build_claude_reasoner(
    settings: Settings, *, fallback: Reasoner, limiter: Limiter | None = None
) -> ClaudeReasoner:
    """The process-wide Claude reasoner (unbound: no budget) from settings."""
    if settings.llm.anthropic_api_key is None:
        raise PermanentError("SLEUTH_LLM=anthropic needs ANTHROPIC_API_KEY")
    secret = settings.llm.anthropic_api_key.get_secret_value()
    client = make_client(
        api_key=secret, base_url=settings.llm.anthropic_base_url, timeout=settings.llm.llm_timeout
    )
    transport = MessagesTransport(
        client,
        claude_retry_policy(
            settings.llm.llm_max_retries, settings.llm.llm_backoff_base, settings.llm.llm_backoff_max
        ),
        limiter,
        key_id(secret),
        RateLimits(
            settings.llm.llm_requests_per_minute,
            settings.llm.llm_input_tokens_per_minute,
            settings.llm.llm_output_tokens_per_minute,
            settings.llm.llm_rate_limit_max_wait,
        ),
    )
    return ClaudeReasoner(
        transport,
        model_fast=settings.llm.model_fast,
        model_synthesis=settings.llm.model_synthesis,
        fallback=fallback,
        fallback_mode=settings.llm.llm_fallback,
        effort_fast=settings.llm.llm_effort_fast or None,
        effort_synthesis=settings.llm.llm_effort_synthesis or None,
        grade_max_passages=settings.llm.llm_grade_max_passages,
    )
