"""Sentence-level compression of selected evidence to a token budget (titles and texts both count).

Each passage keeps its first sentence (it says what the passage is about) while the budget allows; the
rest of the budget goes to the sentences that agree most with the question and the passage's sub-query.
"""

from __future__ import annotations

from collections.abc import Sequence

from investigation.state import Evidence
from investigation.text import content_stems, count_tokens, split_sentences


def evidence_tokens(evidence: Sequence[Evidence]) -> int:
    """Tokens handed to synthesis: every title and text."""
    return sum(count_tokens(e.title) + count_tokens(e.text) for e in evidence)


def _truncate(sentence: str, budget: int) -> str:
    """The first words of a sentence that fit in `budget` tokens (with an ellipsis)."""
    out: list[str] = []
    for word in sentence.split():
        if count_tokens(" ".join([*out, word, "…"])) > budget:
            break
        out.append(word)
    return " ".join(out) + " …" if out else ""


def compress(question: str, evidence: Sequence[Evidence], token_budget: int) -> list[Evidence]:
    """The same evidence (same ids, same order) with texts cut to fit `token_budget` tokens in total.

    Evidence that cannot fit even its title is dropped from the end, so the result never exceeds the budget.
    """
    if evidence_tokens(evidence) <= token_budget:
        return list(evidence)
    question_stems = content_stems(question)
    title_cost = [count_tokens(e.title) for e in evidence]
    remaining = token_budget
    kept = 0
    for cost in title_cost:
        if cost + 1 > remaining:
            break
        remaining -= cost
        kept += 1
    items = list(evidence[:kept])
    sentences = [split_sentences(e.text) for e in items]
    chosen: list[set[int]] = [set() for _ in items]
    # First sentences, best passages first.
    for i, parts in enumerate(sentences):
        if parts and count_tokens(parts[0]) <= remaining:
            chosen[i].add(0)
            remaining -= count_tokens(parts[0])
    # Then the sentences that agree most with the question or the sub-query that found them.
    ranked: list[tuple[float, int, int]] = []
    for i, (e, parts) in enumerate(zip(items, sentences, strict=True)):
        focus = question_stems | content_stems(e.query)
        for j, sentence in enumerate(parts):
            if j in chosen[i]:
                continue
            stems = content_stems(sentence)
            agreement = len(stems & focus) / (1.0 + 0.15 * len(stems)) if stems else 0.0
            ranked.append((-(agreement - 0.01 * i - 0.005 * j), i, j))
    for _neg, i, j in sorted(ranked):
        cost = count_tokens(sentences[i][j])
        if cost <= remaining:
            chosen[i].add(j)
            remaining -= cost
    out: list[Evidence] = []
    for i, (e, parts) in enumerate(zip(items, sentences, strict=True)):
        text = " ".join(parts[j] for j in sorted(chosen[i]))
        if not text and parts and remaining > 4:
            text = _truncate(parts[0], remaining)
            remaining -= count_tokens(text)
        out.append(e.model_copy(update={"text": text}))
    return out
