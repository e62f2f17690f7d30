"""What a wh-question is about (its subject: "refunds" in "How quickly do refunds reach us?"), and whether a
sentence opens with it ("Refunds go back to the original payment method within 10 business days").

A support article states a fact about a thing with the thing first; a sentence that only mentions it later
("… with a full refund") is usually about something else. Synthesis reads this as a small preference among
sentences that are otherwise as good.
"""

from __future__ import annotations

import re

from investigation.text import STOPWORDS, stem, words

# "How quickly do refunds …", "What are support hours?", "When does API v1 stop …", "How long are backups …":
# the noun phrase right after the question word (and its measure word) and the auxiliary.
_WH_SUBJECT = re.compile(
    r"^\s*(?:how\s+(?:long|quickly|soon|often|fast|much|many)|what|when|where|why|which)\s+"
    r"(?:do|does|did|is|are|was|were|will|can|should)\s+(?:the|a|an|my|our|your|their|its)?\s*"
    r"(?P<subject>[^\s?.,;]+)",
    re.IGNORECASE,
)
# A row's or an item's label before the fact ("Changed: …", "Wagely 5.3 — 2026-02-25: New: …").
_LABEL = re.compile(r"^(?:[^:]{1,60}:\s+)+")


def question_subject(question: str) -> str | None:
    """The stem of the first word of a wh-question's subject, or None when it has none we can tell
    ("How quickly do refunds reach us?" → "refund"; "What is the fee?" → "fee")."""
    match = _WH_SUBJECT.match(question)
    if match is None:
        return None
    word = words(match.group("subject"))
    if not word or word[0] in STOPWORDS:
        return None
    return stem(word[0])


def opens_with(sentence: str, subject: str) -> bool:
    """The sentence's first word, or the first word after its labels, is the subject (its stem)."""
    starts = [sentence, _LABEL.sub("", sentence)]
    for text in starts:
        first = words(text[:80])
        if first and stem(first[0]) == subject:
            return True
    return False
