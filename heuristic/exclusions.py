"""A yes/no question about a case the knowledge base excludes by what it involves: "One of our customers
ordered gift cards, we shipped them with Parcelo Protect and the parcel never arrived. Will the claim be
paid?" is decided by "Cash, gift cards and perishable goods are never covered", though that sentence shares
no word with the asking sentence. Serves coverage, eligibility and acceptance questions whose ticket names
the thing a rule leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from heuristic.chains import Sentence
from heuristic.verdicts import is_yes_no
from investigation.text import STOPWORDS, fold

# What a rule leaves out, after the things it names: "… are never covered", "… is not eligible", "… are
# excluded", "… cannot be shipped".
_EXCLUDED = re.compile(
    r"\b(?:is|are)\s+(?:never|not)\s+(?:covered|eligible|accepted|allowed|insured|refundable|refunded|"
    r"supported|permitted|shippable)\b|\b(?:is|are)\s+excluded\b|\bcannot\s+be\s+(?:shipped|insured|"
    r"covered|returned|refunded|sent)\b",
    re.IGNORECASE,
)


def excluded_case(question: str, candidates: Sequence[Sentence]) -> Sentence | None:
    """The sentence whose rule leaves out something the question names in two words or more ("gift cards"
    before "are never covered"), for a yes/no question; else None."""
    if not is_yes_no(question) or not candidates:
        return None
    phrases = [re.compile(rf"(?<!\w){re.escape(p)}(?!\w)") for p in _phrases(question)]
    for c in candidates:
        match = _EXCLUDED.search(c.text)
        if match is None:
            continue
        named = fold(c.text[: match.start()])  # what the rule names, before "are never covered"
        if any(p.search(named) for p in phrases):
            return c
    return None


def _phrases(question: str) -> list[str]:
    """Every two consecutive words of the question that are no stopwords, folded ("customers ordered", "gift
    cards", …): a longer run of them is named wherever its first two words are."""
    runs: list[list[str]] = [[]]
    for word in re.findall(r"[\w'-]+", fold(question)):
        if word in STOPWORDS:
            runs.append([])
        else:
            runs[-1].append(word)
    return [f"{a} {b}" for r in runs for a, b in pairwise(r)]
