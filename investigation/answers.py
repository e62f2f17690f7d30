"""Answers the loop core writes itself: the refusal (and what it searched), and the size of the evidence
handed to synthesis."""

from __future__ import annotations

from collections.abc import Sequence

from investigation.state import Answer, Evidence
from investigation.text import count_tokens, query_key

REFUSAL = ("The answer is not in the knowledge base: no indexed document supports an answer to this "
           "question, so I will not guess.")
# How many searches and nearest topics a refusal names: enough to rephrase from, short enough to read.
_SEARCHED_SHOWN = 4
_NEAREST_SHOWN = 3


def refusal(reason: str = "") -> Answer:
    """The refusal answer ("not in the knowledge base"), with the reason as caveat."""
    return Answer(text=REFUSAL, refused=True, caveat=reason or "no supporting evidence")


def searched_note(searched: Sequence[str], evidence: Sequence[Evidence]) -> str:
    """What a refusal searched and the nearest topics it found, so that whoever reads it can rephrase:
    'Searched for: "…"; "…". Nearest topics found: "…"; "…".' The topics are the titles of `evidence`
    (the caller passes only what the reader may see), best first; "Nothing was searched." without searches."""
    first: dict[str, str] = {}
    for q in searched:
        if key := query_key(q):
            first.setdefault(key, " ".join(q.split()))
    queries = list(first.values())
    if not queries:
        return "Nothing was searched."
    shown = "; ".join(f'"{q}"' for q in queries[:_SEARCHED_SHOWN])
    more = len(queries) - _SEARCHED_SHOWN
    note = f"Searched for: {shown}" + (f" (and {more} more)." if more > 0 else ".")
    titles: dict[str, str] = {}
    for e in sorted(evidence, key=lambda e: -e.score):
        if e.title.strip() and not e.flagged:
            titles.setdefault(e.title.strip().casefold(), e.title.strip())
    nearest = "; ".join(f'"{t}"' for t in list(titles.values())[:_NEAREST_SHOWN])
    return f"{note} Nearest topics found: {nearest}." if nearest else f"{note} Nothing related was found."


def with_searched(answer: Answer, searched: Sequence[str], evidence: Sequence[Evidence]) -> Answer:
    """A refusal that also says what was searched and what was nearest (`searched_note`); any other answer
    as it is."""
    if not answer.refused:
        return answer
    return answer.model_copy(update={"text": f"{answer.text} {searched_note(searched, evidence)}"})


def evidence_tokens(evidence: Sequence[Evidence]) -> int:
    """Tokens handed to synthesis: every title and text."""
    return sum(count_tokens(e.title) + count_tokens(e.text) for e in evidence)
