"""The next step of a sequence: "My invoice failed twice. What happens next?" is answered by what follows the
asker's situation in the sequence that describes it (a timeline's next row, a procedure's next step), not by
the sentence that shares the most words with the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.chains import Sentence
from heuristic.pick_scoring import content_stems
from investigation.text import ask_sentence, words

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
    steps = next_steps(question, candidates)
    return steps[0] if steps else None


def next_steps(question: str, candidates: Sequence[Sentence]) -> list[Sentence]:
    """The answer to a "what happens next?" question after a told situation: the step that follows it, then
    the items after that step in the same numbered sequence (what happens after, in order); [] for any
    other question, or when nothing follows the situation."""
    if not _NEXT.search(question):
        return []
    asking = ask_sentence(question).strip()
    cut = question.rfind(asking) if asking else -1
    told = content_stems(question[:cut]) if cut > 0 else set()
    if len(told) < _TOLD_SHARED:
        return []
    # The retelling says the situation in its own words, not only through its passage's title; between
    # equals, an item of a numbered sequence (what "next" is read along).
    retold = max(candidates, default=None, key=lambda c: (
        len(content_stems(c.text) & told), _label(c.text) is not None, len(c.stems & told), c.weight,
        -c.index, -c.position))
    if retold is None or len(retold.stems & told) < _TOLD_SHARED:
        return []
    # In a numbered sequence ("Day 0: …", "Step 2: …", "3. …") the next item is the next sentence numbered the
    # same way (a row's own later sentences are skipped); otherwise the sentence right after.
    label = _label(retold.text)
    later = sorted((c for c in candidates if c.index == retold.index and c.position > retold.position),
                   key=lambda c: c.position)
    if label is None:
        return [c for c in later if c.position == retold.position + 1][:1]
    items = [c for c in later if _label(c.text) == label]
    step = _counted(question, question[:cut], [retold, *items])
    if step is None:
        return items
    return [c for c in [retold, *items] if c.position >= step.position]


# How many times the told event happened: "twice", "three times", "for the third time".
_TIMES = re.compile(
    r"\b(?:(twice|thrice)|(\d+|two|three|four|five|six)\s+times|"
    r"(?:for\s+)?the\s+(second|third|fourth|fifth|sixth)\s+time)\b",
    re.IGNORECASE,
)
_COUNTS = {"twice": 2, "thrice": 3, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "second": 2,
           "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}


def _counted(question: str, situation: str, items: Sequence[Sentence]) -> Sentence | None:
    """For a situation told with a count ("failed twice") whose sequence numbers each occurrence of that
    event ("Day 0: payment fails", "Day 1, 3 and 7: retries; each failed retry …"): the item holding the
    next occurrence, or the item after the last that tells the event. The event is what the situation says
    happened (its past-tense words: "failed", "cracked"); items tell it while their own words say it again,
    and each number in an item's label is one occurrence. Serves "what happens next?" after a counted
    situation; None without a count or a told event."""
    match = _TIMES.search(question)
    event = content_stems(" ".join(w for w in words(situation) if len(w) > 4 and w.endswith("ed")))
    if match is None or not event:
        return None
    word = next(g for g in match.groups() if g)
    count = int(word) if word.isdigit() else _COUNTS[word.lower()]
    occurrences: list[Sentence] = []
    for n, item in enumerate(items):
        if n and not content_stems(item.text) & event:
            return item  # the event stopped before its next occurrence: what follows its run is next
        head = _ITEM.match(item.text)
        occurrences.extend([item] * max(1, len(_NUMBERS.findall(head.group(0))) if head else 1))
        if len(occurrences) > count:
            return occurrences[count]
    return None


_NUMBERS = re.compile(r"\d+")


# An item's number at the start of a sentence, with the word it counts ("Day 3:", "Step 2:", "4."):
# the word, lower-cased ("" for a bare number).
_ITEM = re.compile(r"^\s*(?:([A-Za-z]+)\s+)?\d+(?:[\d,\s]|and\s)*[:.)]\s")


def _label(text: str) -> str | None:
    match = _ITEM.match(text)
    return None if match is None else (match.group(1) or "").lower()
