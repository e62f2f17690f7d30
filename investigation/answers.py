"""Answers the loop core writes itself: the refusal, and the size of the evidence handed to synthesis."""

from __future__ import annotations

from collections.abc import Sequence

from investigation.state import Answer, Evidence
from investigation.text import count_tokens

REFUSAL = ("The answer is not in the knowledge base: no indexed document supports an answer to this "
           "question, so I will not guess.")


def refusal(reason: str = "") -> Answer:
    """The refusal answer ("not in the knowledge base"), with the reason as caveat."""
    return Answer(text=REFUSAL, refused=True, caveat=reason or "no supporting evidence")


def evidence_tokens(evidence: Sequence[Evidence]) -> int:
    """Tokens handed to synthesis: every title and text."""
    return sum(count_tokens(e.title) + count_tokens(e.text) for e in evidence)
