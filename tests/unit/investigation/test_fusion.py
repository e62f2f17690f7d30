"""Reciprocal rank fusion (k=60) keyed by chunk_id, remembering which sub-query found each chunk."""

from __future__ import annotations

import pytest

from investigation.fusion import RRF_K, RankedList, rrf
from tests.unit.investigation.fakes import passage


def test_rrf_sums_reciprocal_ranks_and_orders_best_first() -> None:
    a, b, c = (passage(x, x, x) for x in ("a#0", "b#0", "c#0"))
    fused = rrf([RankedList("q1", [a, b]), RankedList("q1", [b, c])])
    assert [p.chunk_id for p in fused.passages] == ["b#0", "a#0", "c#0"]
    assert fused.passages[0].score == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert [p.rank for p in fused.passages] == [1, 2, 3]
    assert all(p.engine == "fused" for p in fused.passages)


def test_rrf_remembers_the_subquery_that_ranked_a_chunk_best() -> None:
    x, y = passage("x#0", "X", "x"), passage("y#0", "Y", "y")
    fused = rrf([RankedList("first", [y, x]), RankedList("second", [x])])
    assert fused.query_of == {"x#0": "second", "y#0": "first"}


def test_rrf_counts_a_duplicate_inside_one_list_once_and_records_engines() -> None:
    x = passage("x#0", "X", "x", engine="bm25")
    xv = passage("x#0", "X", "x", engine="vector")
    fused = rrf([RankedList("q", [x, x]), RankedList("q", [xv])])
    assert fused.passages[0].score == pytest.approx(2 / (RRF_K + 1))
    assert fused.engines_of["x#0"] == ("bm25", "vector")


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf([]).passages == []
