"""Builds the offline `heuristic` reasoner (package `heuristic/`) on a real embedder.

The embedder's own content-hash cache serves repeated texts; grading vectors stay out of its on-disk cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapters.search.embedder import embed_matrix
from heuristic.reasoner import HeuristicReasoner
from investigation.ports import Embedder


def heuristic_reasoner(embedder: Embedder) -> HeuristicReasoner:
    """The heuristic reasoner whose grading vectors come from `embed_matrix` (no on-disk growth)."""

    def vectorise(texts: Sequence[str]) -> np.ndarray:
        return embed_matrix(embedder, texts, persist=False)

    return HeuristicReasoner(embedder, vectorise=vectorise)
