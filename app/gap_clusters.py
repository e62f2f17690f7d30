"""Grouping questions by topic for the knowledge-gaps report, pure numpy: leader clustering on cosine
similarity (deterministic, one pass over the questions in a fixed order, blocks of matrix products so 10,000
questions take seconds), one refinement against the groups' centroids, then each group's most typical
question (closest to its centroid) and its frequent terms (counted in the group, weighted by rarity)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Labels = npt.NDArray[np.int64]

# Two questions at this cosine or closer (all-MiniLM-L6-v2, unit vectors) ask about the same topic:
# paraphrases of one support question score 0.46-0.9, neighbouring topics (an invoice export, an invoice
# address) below.
DEFAULT_THRESHOLD = 0.45
BLOCK = 512
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*[a-z0-9]|[a-z0-9]")
_STOPWORDS_TEXT = """
a about above after again all also am an and any are as at be because been before being below between both but
by can could did do does doing done don't down during each even ever every few for from further get gets got
had has have having he her here hers him his how i i'm if in into is isn't it it's its just let like many me
might more most much must my need no nor not now of off on once one only or other our out over own please same
shall she should so some still such than thank thanks that the their them then there these they this those
through to too under until up us use used using very via want was we were what when where which while who whom
why will with would yes yet you your hi hello hey there's can't cannot i've we're you're
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def _unit(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def leader_clusters(vectors: Matrix, threshold: float = DEFAULT_THRESHOLD, *, block: int = BLOCK) -> Labels:
    """One label per row: each row joins the most similar earlier leader at `threshold` or closer, else
    leads a group of its own. Rows of one block are compared with the leaders before it in one product, and
    with the block's own new leaders one by one, which gives exactly the one-by-one result."""
    x = _unit(np.asarray(vectors, dtype=np.float32))
    n = len(x)
    labels = np.empty(n, dtype=np.int64)
    leaders = np.empty_like(x)
    k = 0
    for start in range(0, n, block):
        rows = x[start:start + block]
        known = k
        sims = rows @ leaders[:known].T if known else np.empty((len(rows), 0), dtype=np.float32)
        for j, row in enumerate(rows):
            best, label = -2.0, -1
            if known:
                i = int(np.argmax(sims[j]))
                best, label = float(sims[j, i]), i
            if k > known:
                fresh = leaders[known:k] @ row
                i = int(np.argmax(fresh))
                if float(fresh[i]) > best:
                    best, label = float(fresh[i]), known + i
            if best < threshold:
                leaders[k], label = row, k
                k += 1
            labels[start + j] = label
    return labels


def centroids(vectors: Matrix, labels: Labels) -> Matrix:
    """The unit mean of each label's rows (labels 0..max)."""
    x = _unit(np.asarray(vectors, dtype=np.float32))
    sums = np.zeros((int(labels.max()) + 1 if len(labels) else 0, x.shape[1]), dtype=np.float32)
    np.add.at(sums, labels, x)
    return _unit(sums)


def _compact(labels: Labels) -> Labels:
    """Labels renumbered 0.. in order of first appearance (groups left empty disappear)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse].astype(np.int64)


def cluster(vectors: Matrix, threshold: float = DEFAULT_THRESHOLD, *, refine: int = 1) -> Labels:
    """Leader clusters, then `refine` rounds moving each row to its nearest centroid (a row kept by an
    early, off-centre leader moves to the group it resembles most); same input, same labels."""
    labels = leader_clusters(vectors, threshold)
    x = _unit(np.asarray(vectors, dtype=np.float32))
    for _ in range(refine):
        if not len(labels):
            break
        c = centroids(x, labels)
        moved = np.concatenate([np.argmax(x[s:s + 4096] @ c.T, axis=1) for s in range(0, len(x), 4096)])
        moved = _compact(moved.astype(np.int64))
        if np.array_equal(moved, labels):
            break
        labels = moved
    return labels


def typical(vectors: Matrix, members: Sequence[int], among: Sequence[int] | None = None) -> int:
    """The member (of `among`, when given) closest to the group's centroid; the earliest on a tie."""
    x = np.asarray(vectors, dtype=np.float32)
    centre = _unit(x[list(members)]).sum(axis=0)
    pool = list(among if among is not None else members)
    return int(pool[int(np.argmax(_unit(x[pool]) @ centre))])


def words(text: str) -> set[str]:
    """The distinct content words of a question, lowercased (stopwords and numbers-only tokens dropped)."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()}


def frequent_terms(texts: Sequence[str], members: Sequence[int], *, document_freq: Counter[str] | None = None,
                   top: int = 4) -> list[str]:
    """The terms most of the group's questions share and few others use: questions of the group holding the
    term × log(1 + all questions / questions holding it); ties alphabetical."""
    df = document_freq if document_freq is not None else document_frequencies(texts)
    total = max(1, len(texts))
    inside: Counter[str] = Counter()
    for i in members:
        inside.update(words(texts[i]))
    floor = 2 if len(members) > 1 else 1
    scored = [(-n * math.log(1 + total / df.get(t, 1)), t) for t, n in inside.items() if n >= floor]
    return [t for _, t in sorted(scored)[:top]]


def document_frequencies(texts: Sequence[str]) -> Counter[str]:
    df: Counter[str] = Counter()
    for text in texts:
        df.update(words(text))
    return df


def groups(labels: Labels) -> list[list[int]]:
    """Row indexes per label, in label order."""
    found: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        found.setdefault(int(label), []).append(i)
    return [found[k] for k in sorted(found)]


__all__ = ["DEFAULT_THRESHOLD", "centroids", "cluster", "document_frequencies", "frequent_terms", "groups",
           "leader_clusters", "typical", "words"]
