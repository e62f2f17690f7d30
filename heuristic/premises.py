"""False premises: a question that takes for granted something the evidence denies ("How long are payslips
kept on the Starter plan?" when there is no Starter plan; "Since Early Pay is available in Germany, what is
the fee?" when it is not available in the EU). The sentence that denies it must come first, then the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.chains import Sentence
from heuristic.focus import focus_names
from investigation.text import fold

# What denies a thing exists or is offered: "there is no X", "X is not available / offered / supported".
_DENIED_AFTER = r"(?:is|are)\s+not\s+(?:available|offered|supported|included|possible)\b"
_DENIED_BEFORE = r"\bthere\s+(?:is|are)\s+no\s+"


_ASSUMED = r"(?:is|are)\s+(?:now\s+)?(?:available|offered|supported|included|possible)\b"


def denies(sentence: str, name: str, question: str) -> bool:
    """The sentence denies what the question takes for granted about `name` (case and accents folded):
    that it exists ("there is no X", whenever the question names X), or that it is available where the
    question says it is ("X is not available …" only against a question stating "X is available")."""
    text, key = fold(sentence), re.escape(fold(name))
    if re.search(rf"{_DENIED_BEFORE}{key}\b", text):
        return True
    return bool(
        re.search(rf"\b{key}\s+{_DENIED_AFTER}", text) and re.search(rf"\b{key}\s+{_ASSUMED}", fold(question))
    )


def correction(question: str, candidates: Sequence[Sentence]) -> Sentence | None:
    """The first evidence sentence that denies one of the question's specific names, if any.

    Serves questions resting on a premise about a named plan, feature or product (its existence or its
    availability): the correction leads the answer instead of being buried under what the name led to.
    """
    names = [n for n in focus_names(question) if n.strip()]
    for c in candidates:
        if any(denies(c.text, n, question) for n in names):
            return c
    return None
