"""Final ranking of the evidence: each sub-query's best passages are kept, then the best of the rest.

The ranking (at most k, best first) is what a benchmark scores as `retrieved`; it does not depend on the
order the evidence arrives in, only on scores, hops, sub-queries and chunk ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from investigation.compression import compress
from investigation.state import Evidence, Grade


@dataclass(frozen=True)
class SelectionConfig:
    """How many of each sub-query's best passages are reserved before the rest compete on score."""

    reserve_per_query: int = 2
    min_grade_for_reserve: Grade = Grade.AMBIGUOUS


def _key(e: Evidence) -> tuple[float, int, str]:
    return (-e.score, e.hop, e.chunk_id)


def rank_evidence(evidence: Sequence[Evidence], k: int, config: SelectionConfig = SelectionConfig()) -> list[Evidence]:
    """At most `k` evidence, best first: round-robin over (hop, sub-query) groups, then by score."""
    unique: dict[str, Evidence] = {}
    for e in sorted(evidence, key=_key):
        unique.setdefault(e.chunk_id, e)
    pool = sorted(unique.values(), key=_key)
    groups: dict[tuple[int, str], list[Evidence]] = {}
    for e in pool:
        groups.setdefault((e.hop, e.query), []).append(e)
    order = sorted(groups, key=lambda g: (_key(groups[g][0]), g))
    chosen: list[Evidence] = []
    taken: set[str] = set()
    eligible = {Grade.CORRECT} if config.min_grade_for_reserve is Grade.CORRECT else {Grade.CORRECT, Grade.AMBIGUOUS}
    for depth in range(config.reserve_per_query):
        for group in order:
            members = groups[group]
            if depth < len(members) and len(chosen) < k:
                e = members[depth]
                if e.grade in eligible and e.chunk_id not in taken:
                    chosen.append(e)
                    taken.add(e.chunk_id)
    for e in pool:
        if len(chosen) >= k:
            break
        if e.chunk_id not in taken:
            chosen.append(e)
            taken.add(e.chunk_id)
    return chosen


def select_evidence(question: str, evidence: Sequence[Evidence], k: int, token_budget: int,
                    config: SelectionConfig = SelectionConfig()) -> list[Evidence]:
    """The ranked evidence, compressed to `token_budget` tokens for synthesis."""
    return compress(question, rank_evidence(evidence, k, config), token_budget)
