"""Reciprocal rank fusion (Cormack et al., k=60) of ranked Passage lists, keyed by chunk_id.

Each input list is one sub-query on one engine; the fused result remembers which sub-query found each
chunk (the one that ranked it best), so grading and bridging can tell hops and purposes apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from investigation.sources.plan import latest_only
from investigation.state import Passage

RRF_K = 60


@dataclass(frozen=True)
class RankedList:
    """One ranked list to fuse: the hits of `query` on one engine."""

    query: str
    passages: Sequence[Passage]
    weight: float = 1.0


@dataclass(frozen=True)
class Fused:
    """Fused passages (best first, `engine="fused"`, `score` = RRF score) and the finder of each chunk."""

    passages: list[Passage]
    query_of: dict[str, str] = field(default_factory=dict)
    engines_of: dict[str, tuple[str, ...]] = field(default_factory=dict)


def rrf(lists: Sequence[RankedList], *, k: int = RRF_K) -> Fused:
    """Fuse ranked lists: score(d) = Σ weight / (k + rank_in_list(d)), ties broken by chunk_id.

    Ranks are positions in each list (1-based), not the engines' own `rank` fields, so a list that
    arrives unsorted by rank is still read in its given order. Duplicates inside one list count once.
    """
    scores: dict[str, float] = {}
    best: dict[str, tuple[float, Passage, str]] = {}  # chunk_id -> (contribution, passage, query)
    engines: dict[str, list[str]] = {}
    for ranked in lists:
        seen_here: set[str] = set()
        for position, passage in enumerate(ranked.passages, start=1):
            if passage.chunk_id in seen_here:
                continue
            seen_here.add(passage.chunk_id)
            contribution = ranked.weight / (k + position)
            scores[passage.chunk_id] = scores.get(passage.chunk_id, 0.0) + contribution
            previous = best.get(passage.chunk_id)
            if previous is None or contribution > previous[0]:
                best[passage.chunk_id] = (contribution, passage, ranked.query)
            found_by = engines.setdefault(passage.chunk_id, [])
            if passage.engine not in found_by:
                found_by.append(passage.engine)
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    # While a synced article is being replaced both versions are indexed: keep only the newest one.
    order = latest_only(order, lambda cid: best[cid][1].source_id)
    fused = [
        best[cid][1].model_copy(update={"score": scores[cid], "engine": "fused", "rank": i})
        for i, cid in enumerate(order, start=1)
    ]
    return Fused(
        passages=fused,
        query_of={cid: best[cid][2] for cid in order},
        engines_of={cid: tuple(engines[cid]) for cid in order},
    )
