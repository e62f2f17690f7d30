"""The `heuristic` Reasoner: deterministic, offline, no LLM — this package's rules plus a local embedder.

It is the default provider and the fallback when an LLM is down or over budget; it reports zero usage.
`adapters.llm.heuristic.heuristic_reasoner` builds it with the embedder's fast matrix path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

from heuristic.grader import GraderConfig, grade_passages
from heuristic.planner import PlannerConfig, bridge_queries, part_queries, plan_question, probe_queries
from heuristic.plans import as_named
from heuristic.reading import read_passage
from heuristic.regions import as_written, searched_as
from heuristic.router import RouterConfig, chitchat_prototypes, route_question
from heuristic.selection import SelectionConfig, select_evidence
from heuristic.sufficiency import SufficiencyConfig, judge_evidence
from heuristic.synthesis import synthesize_answer
from investigation.ports import Embedder, ProgressEvents, TokenBudget
from investigation.state import (
    Answer,
    Evidence,
    Judgment,
    Passage,
    Plan,
    PlanKind,
    RouteDecision,
    SubQuery,
)
from investigation.usage import LLMUsage


class HeuristicReasoner:
    """Implements `investigation.ports.Reasoner` by composing this package's pure functions.

    `vectorise` turns texts into a unit-vector matrix (rows); by default it stacks `embedder.embed`."""

    name = "heuristic"

    def __init__(self, embedder: Embedder, *,
                 router: RouterConfig | None = None, grader: GraderConfig | None = None,
                 planner: PlannerConfig | None = None, sufficiency: SufficiencyConfig | None = None,
                 selection: SelectionConfig | None = None,
                 vectorise: Callable[[Sequence[str]], np.ndarray] | None = None) -> None:
        self.embedder = embedder
        self._vectorise = vectorise
        self.router_config = router or RouterConfig()
        self.grader_config = grader or GraderConfig()
        self.planner_config = planner or PlannerConfig()
        self.sufficiency_config = sufficiency or SufficiencyConfig()
        self.selection_config = selection or SelectionConfig()

    def vectorise(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of `texts` (rows)."""
        if self._vectorise is not None:
            return self._vectorise(texts)
        return np.asarray(self.embedder.embed(texts), dtype=np.float32).reshape(len(texts), self.embedder.dim)

    def route(self, question: str) -> RouteDecision:
        return route_question(question, self.embedder, self.router_config, vectorise=self.vectorise,
                              prototypes=self.chitchat_vectors)

    @cached_property
    def chitchat_vectors(self) -> np.ndarray:
        """The router's chit-chat prototype vectors, embedded once per reasoner (they never change)."""
        return chitchat_prototypes(self.embedder)

    def warm_up(self) -> None:
        """Embed what routing needs before the first question (a worker's warm-up)."""
        _ = self.chitchat_vectors

    def plan(self, question: str, route: RouteDecision) -> Plan:
        return plan_question(question, route)

    def grade(self, question: str, passages: Sequence[Passage], hop: int,
              query_of: dict[str, str]) -> list[Evidence]:
        return grade_passages(_as_written(question, passages), passages, hop, query_of, self.vectorise,
                              self.grader_config)

    def judge(self, question: str, plan: Plan, evidence: Sequence[Evidence]) -> Judgment:
        return judge_evidence(question, plan, evidence, self.sufficiency_config)

    def next_queries(self, question: str, plan: Plan, evidence: Sequence[Evidence],
                     asked: Sequence[str], judgment: Judgment) -> list[SubQuery]:
        probes = probe_queries(question, [searched_as(n) for n in judgment.absent], asked)
        if plan.kind is PlanKind.DECOMPOSED:
            return [*probes, *part_queries(plan, judgment.missing_information, asked)]
        return [*probes, *bridge_queries(question, evidence, asked, self.planner_config)]

    def select(
        self, question: str, evidence: Sequence[Evidence], k: int, token_budget: int
    ) -> list[Evidence]:
        asked = _as_written(question, evidence)
        return select_evidence(asked, evidence, k, token_budget, self.selection_config)

    def synthesize(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        return synthesize_answer(_as_written(question, evidence), route, evidence)

    def read_ahead(self, passage: Passage) -> None:
        """`investigation.ports.ReadsAhead`: the text caches warmed with what the rules read of `passage`."""
        read_passage(passage)

    def bind(self, *, budget: TokenBudget, on_event: ProgressEvents | None = None) -> HeuristicReasoner:
        """No LLM calls, nothing to charge: the same reasoner serves every investigation."""
        return self

    def take_usage(self) -> list[LLMUsage]:
        return []  # no provider calls, nothing to charge


def _as_written(question: str, passages: Sequence[Passage] | Sequence[Evidence]) -> str:
    """The question with each place no passage mentions said as its region that one does (`as_written`), and
    a plan named by its price said by its name (`as_named`)."""
    texts = [f"{p.title}. {p.text}" for p in passages]
    return as_named(as_written(question, texts), texts)
