"""Grouping questions by topic (`app.gap_clusters`, pure numpy): separated topics come out as separate groups,
the block-wise leader pass gives exactly the one-by-one result, the same input gives the same labels, the
typical question is the one nearest the centroid, frequent terms are the group's own; and `parse_since`."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from app import gap_clusters as gc
from app.gaps import parse_since
from investigation.errors import ValidationFailed


def _topics(
    per: int = 30, topics: int = 4, noise: float = 0.15, seed: int = 7
) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.normal(size=(64, topics)))[0].T  # orthonormal topic directions
    rows, truth = [], []
    for i in range(per * topics):
        t = i % topics  # interleaved: a topic's questions arrive mixed with the others'
        rows.append(axes[t] + noise * rng.normal(size=64) / np.sqrt(64))
        truth.append(t)
    return np.asarray(rows, dtype=np.float32), truth


def test_separated_topics_are_separate_groups() -> None:
    vectors, truth = _topics()
    labels = gc.cluster(vectors, 0.6)
    assert len(set(labels.tolist())) == 4
    # One label per topic and one topic per label.
    assert {(t, int(lab)) for t, lab in zip(truth, labels, strict=True)} == {(t, t) for t in range(4)}


def test_blocks_give_the_one_by_one_result_and_the_same_input_the_same_labels() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(700, 32)).astype(np.float32)
    vectors[::3] += 4 * vectors[0]  # some structure, many singletons
    one_by_one = gc.leader_clusters(vectors, 0.5, block=1)
    assert np.array_equal(gc.leader_clusters(vectors, 0.5, block=64), one_by_one)
    assert np.array_equal(gc.leader_clusters(vectors, 0.5, block=512), one_by_one)
    assert np.array_equal(gc.cluster(vectors, 0.5), gc.cluster(vectors.copy(), 0.5))
    labels = gc.cluster(vectors, 0.5)
    assert sorted(set(labels.tolist())) == list(range(labels.max() + 1))  # compact, 0..k-1


def test_a_threshold_of_one_keeps_every_distinct_question_apart_and_none_groups_all() -> None:
    vectors, _ = _topics(per=5)
    assert len(set(gc.cluster(vectors, 1.0001).tolist())) == len(vectors)
    assert len(set(gc.cluster(vectors, -1.0).tolist())) == 1
    assert gc.cluster(np.zeros((0, 8), dtype=np.float32)).tolist() == []


def test_the_typical_question_is_nearest_the_centroid() -> None:
    centre = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    vectors = np.array([[1, 0.5, 0], [1, -0.5, 0], [1, 0.05, 0], [0, 0, 1]], dtype=np.float32)
    assert gc.typical(vectors, [0, 1, 2]) == 2
    assert gc.typical(vectors, [0, 1, 2], among=[0, 1]) == 0  # the earliest of equals
    assert np.allclose(gc.centroids(vectors, np.array([0, 0, 0, 1]))[0], centre, atol=0.02)


def test_frequent_terms_are_the_groups_own() -> None:
    texts = [
        "How do I export invoices to CSV?",
        "Can invoices be exported as CSV files?",
        "Export all invoices to CSV please",
        "How do I reset my password?",
        "Password reset link expired",
    ]
    terms = gc.frequent_terms(texts, [0, 1, 2])
    assert terms[:2] == ["csv", "invoices"]
    assert "password" not in terms and "how" not in terms
    assert gc.frequent_terms(texts, [3, 4]) == ["password", "reset"]
    assert gc.words("What's the SLA for <b>P1</b> tickets in 2026?") == {"what's", "sla", "tickets"}


@pytest.mark.parametrize(("text", "span"), [("30d", timedelta(days=30)), ("12h", timedelta(hours=12)),
                                            ("2w", timedelta(weeks=2)), (" 7d ", timedelta(days=7))])
def test_periods(text: str, span: timedelta) -> None:
    assert parse_since(text) == span


@pytest.mark.parametrize("text", ["30", "d30", "30 days", "-3d", "0h", "9999d", "", "1y"])
def test_a_malformed_period_names_the_option(text: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        parse_since(text)
    assert err.value.field == "--since"
