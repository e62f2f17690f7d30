"""The `heuristic` Reasoner: deterministic, offline, no LLM — the domain's rules plus a local embedder.

It is the default provider and the fallback when an LLM is down or over budget; it reports zero usage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapters.search.embedder import embed_matrix
from investigation.grader import GraderConfig, grade_passages
from investigation.planner import PlannerConfig, bridge_queries, part_queries, plan_question, probe_queries
from investigation.ports import Embedder
from investigation.router import RouterConfig, route_question
from investigation.selection import SelectionConfig, select_evidence
from investigation.state import Answer, Evidence, Judgment, Passage, Plan, RouteDecision, SubQuery, Usage
from investigation.sufficiency import SufficiencyConfig, judge_evidence
from investigation.synthesis import synthesize_answer


class HeuristicReasoner:
    """Implements `investigation.ports.Reasoner` by composing the pure domain functions."""

    name = "heuristic"
    usage = Usage()

    def __init__(self, embedder: Embedder, *,
                 router: RouterConfig | None = None, grader: GraderConfig | None = None,
                 planner: PlannerConfig | None = None, sufficiency: SufficiencyConfig | None = None,
                 selection: SelectionConfig | None = None) -> None:
        self.embedder = embedder
        self.router_config = router or RouterConfig()
        self.grader_config = grader or GraderConfig()
        self.planner_config = planner or PlannerConfig()
        self.sufficiency_config = sufficiency or SufficiencyConfig()
        self.selection_config = selection or SelectionConfig()

    def vectorise(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of `texts` (rows). The embedder's own content-hash cache serves repeats; grading
        vectors stay out of its on-disk cache."""
        return embed_matrix(self.embedder, texts, persist=False)

    def route(self, question: str) -> RouteDecision:
        return route_question(question, self.embedder, self.router_config)

    def plan(self, question: str, route: RouteDecision) -> Plan:
        return plan_question(question, route)

    def grade(self, question: str, passages: Sequence[Passage], hop: int,
              query_of: dict[str, str]) -> list[Evidence]:
        return grade_passages(question, passages, hop, query_of, self.vectorise, self.grader_config)

    def judge(self, question: str, plan: Plan, evidence: Sequence[Evidence]) -> Judgment:
        return judge_evidence(question, plan, evidence, self.sufficiency_config)

    def next_queries(self, question: str, plan: Plan, evidence: Sequence[Evidence],
                     asked: Sequence[str]) -> list[SubQuery]:
        judgment = self.judge(question, plan, evidence)
        probes = probe_queries(question, judgment.missing_information, asked)
        if plan.kind == "decomposed":
            return [*probes, *part_queries(plan, judgment.missing_information, asked)]
        return [*probes, *bridge_queries(question, evidence, asked, self.planner_config)]

    def select(self, question: str, evidence: Sequence[Evidence], k: int, token_budget: int) -> list[Evidence]:
        return select_evidence(question, evidence, k, token_budget, self.selection_config)

    def synthesize(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        return synthesize_answer(question, route, evidence)

    def take_usage(self) -> list[dict[str, object]]:
        return []  # no provider calls, nothing to charge
