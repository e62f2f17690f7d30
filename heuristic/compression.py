"""Sentence-level compression of selected evidence to a token budget (titles and texts both count).

Texts are read as plain sentences first (`prose.units`: markdown tables become row sentences, headings and
emphasis go). Each passage keeps its first sentence (it says what the passage is about) while the budget
allows; the rest of the budget goes to the sentences that agree most with the question and the passage's
sub-query. Kept sentences are separated by blank lines, so synthesis reads them back one by one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.asked import ASKED_ABILITY
from heuristic.focus import focus_names
from heuristic.prose import Unit, units, with_context
from investigation.answers import evidence_tokens
from investigation.state import Evidence
from investigation.text import ask_sentence, content_stems, count_tokens, fold

UNIT_SEPARATOR = "\n\n"
# Who or what may have what "Can I give them X?" asks for ("Companies younger than 90 days are never
# eligible"): the condition that decides the answer, often in no word of the question. It is kept as a
# sentence naming one of the question's names is.
_ELIGIBILITY = re.compile(r"\b(?:eligible|ineligible|eligibility|qualif(?:y|ies|ied)|not\s+allowed)\b",
                          re.IGNORECASE)
_ELIGIBILITY_WEIGHT = 1.0


def _truncate(sentence: str, budget: int) -> str:
    """The first words of a sentence that fit in `budget` tokens (with an ellipsis)."""
    out: list[str] = []
    for word in sentence.split():
        if count_tokens(" ".join([*out, word, "…"])) > budget:
            break
        out.append(word)
    return " ".join(out) + " …" if out else ""


def _heading(unit: Unit, text: str) -> str:
    """The markdown heading line that gives `unit` its section back after compression ("" when the unit has
    none, or its text already carries it: `with_context` prefixed what it names, or it opens with it)."""
    if not unit.section or text != unit.text or text.startswith(f"{unit.section}:"):
        return ""
    return f"## {unit.section}"


def _joined(parts: Sequence[tuple[str, str]]) -> str:
    """Kept sentences separated by blank lines, each heading written once before the first sentence under
    it."""
    lines: list[str] = []
    current = ""
    for heading, text in parts:
        if heading and heading != current:
            lines.append(heading)
        current = heading
        lines.append(text)
    return UNIT_SEPARATOR.join(lines)


def agreement(unit: Unit, focus: set[str]) -> float:
    """How much a sentence (with its section) agrees with the focus stems, long sentences damped."""
    stems = content_stems(unit.text)
    if not stems:
        return 0.0
    return len((stems | content_stems(unit.section)) & focus) / (1.0 + 0.15 * len(stems))


def compress(question: str, evidence: Sequence[Evidence], token_budget: int) -> list[Evidence]:
    """The same evidence (same ids, same order) with texts cut to fit `token_budget` tokens in total.

    Evidence that cannot fit even its title is dropped from the end, so the result never exceeds the budget.
    """
    if evidence_tokens(evidence) <= token_budget:
        return list(evidence)
    question_stems = content_stems(question)
    remaining = token_budget
    kept = 0
    for e in evidence:
        cost = count_tokens(e.title)
        if cost + 1 > remaining:
            break
        remaining -= cost
        kept += 1
    items = list(evidence[:kept])
    parsed = [units(e.text, question) for e in items]
    texts = [[with_context(u) for u in us] for us in parsed]
    # A sentence keeps the heading it sits under (an FAQ's question, a plan's name) when its text does not say
    # it: synthesis reads the heading back as the sentence's context. Its tokens count with the sentence.
    headings = [
        [_heading(u, t) for u, t in zip(us, ts, strict=True)] for us, ts in zip(parsed, texts, strict=True)
    ]
    costs = [[count_tokens(t) + count_tokens(h) for t, h in zip(ts, hs, strict=True)]
             for ts, hs in zip(texts, headings, strict=True)]
    chosen: list[set[int]] = [set() for _ in items]
    # First sentences, best passages first (unless a structured page opens with something off the point).
    for i, (e, us) in enumerate(zip(items, parsed, strict=True)):
        focus = question_stems | content_stems(e.query)
        structured = any(u.kind != "sentence" or u.section for u in us)
        if us and costs[i][0] <= remaining and (not structured or agreement(us[0], focus) > 0):
            chosen[i].add(0)
            remaining -= costs[i][0]
    # Then the sentences that agree most with the question or the sub-query that found them.
    # (A sentence naming one of the question's specific names comes first: it is what shows that the
    # knowledge base talks about it at all; so does one saying who is eligible, for a "can I …" question.)
    names = [fold(n) for n in focus_names(question)]
    permission = ASKED_ABILITY.search(ask_sentence(question)) is not None
    ranked: list[tuple[float, int, int]] = []
    for i, (e, us) in enumerate(zip(items, parsed, strict=True)):
        focus = question_stems | content_stems(e.query)
        for j, unit in enumerate(us):
            if j not in chosen[i]:
                named = 1.0 if any(n in fold(texts[i][j]) for n in names) else 0.0
                named += _ELIGIBILITY_WEIGHT if permission and _ELIGIBILITY.search(unit.text) else 0.0
                ranked.append((-(agreement(unit, focus) + named - 0.01 * i - 0.005 * j), i, j))
    for _neg, i, j in sorted(ranked):
        if costs[i][j] <= remaining:
            chosen[i].add(j)
            remaining -= costs[i][j]
    out: list[Evidence] = []
    for i, (e, ts) in enumerate(zip(items, texts, strict=True)):
        text = _joined([(headings[i][j], ts[j]) for j in sorted(chosen[i])])
        if not text and ts and remaining > 4:
            text = _truncate(ts[0], remaining)
            remaining -= count_tokens(text)
        out.append(e.model_copy(update={"text": text}))
    return out
