"""The next step of a sequence: "My invoice failed twice. What happens next?" is answered by what follows the
asker's situation in the sequence that describes it (a timeline's next row, a procedure's next step), not by
the sentence that shares the most words with the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.chains import Sentence
from heuristic.pick_scoring import content_stems
from investigation.text import ask_sentence

# What comes after the situation the asker has told: "what happens next?", "what are the next steps?",
# "what should we do now?".
_NEXT = re.compile(
    r"\bwhat\s+(?:happens|comes|follows)\s+(?:next|now|then|after\s+that)\b|"
    r"\bwhat\s+(?:are|is)\s+the\s+next\s+steps?\b|"
    r"\bwhat\s+(?:do|should|must|can)\s+(?:i|we)\s+do\s+(?:next|now)\b",
    re.IGNORECASE,
)
# How many of the told situation's words a sentence must hold to be taken for its retelling.
_TOLD_SHARED = 2


def next_in_sequence(question: str, candidates: Sequence[Sentence]) -> Sentence | None:
    """For a "what happens next?" question after a told situation, the sentence that follows the one
    retelling that situation (the most of its words, at least `_TOLD_SHARED`) in the same passage; None for
    any other question, or when nothing follows it."""
    if not _NEXT.search(question):
        return None
    asking = ask_sentence(question).strip()
    cut = question.rfind(asking) if asking else -1
    told = content_stems(question[:cut]) if cut > 0 else set()
    if len(told) < _TOLD_SHARED:
        return None
    retold = max(candidates, key=lambda c: (len(c.stems & told), c.weight, -c.index, -c.position),
                 default=None)
    if retold is None or len(retold.stems & told) < _TOLD_SHARED:
        return None
    # In a numbered sequence ("Day 0: …", "Step 2: …", "3. …") the next item is the next sentence numbered the
    # same way (a row's own later sentences are skipped); otherwise the sentence right after.
    label = _label(retold.text)
    later = sorted((c for c in candidates if c.index == retold.index and c.position > retold.position),
                   key=lambda c: c.position)
    if label is not None:
        return next((c for c in later if _label(c.text) == label), None)
    return next((c for c in later if c.position == retold.position + 1), None)


# An item's number at the start of a sentence, with the word it counts ("Day 3:", "Step 2:", "4."):
# the word, lower-cased ("" for a bare number).
_ITEM = re.compile(r"^\s*(?:([A-Za-z]+)\s+)?\d+(?:[\d,\s]|and\s)*[:.)]\s")


def _label(text: str) -> str | None:
    match = _ITEM.match(text)
    return None if match is None else (match.group(1) or "").lower()
