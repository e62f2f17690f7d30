"""What a wh-question is about (its subject: "refunds" in "How quickly do refunds reach us?"), and whether a
sentence opens with it ("Refunds go back to the original payment method within 10 business days").

A support article states a fact about a thing with the thing first; a sentence that only mentions it later
("… with a full refund") is usually about something else. Synthesis reads this as a small preference among
sentences that are otherwise as good.
"""

from __future__ import annotations

import re

from investigation.text import STOPWORDS, stem, words

# "How quickly do refunds …", "What are support hours?", "When does API v1 stop …", "How much does an extra
# label cost …": the noun phrase right after the question word (and its measure word) and the auxiliary.
_WH_SUBJECT = re.compile(
    r"^\s*(?:how\s+(?:long|quickly|soon|often|fast|much|many)|what|when|where|why|which)\s+"
    r"(?:do|does|did|is|are|was|were|will|can|should)\s+(?P<subject>[^?.,;]+)",
    re.IGNORECASE,
)
# A row's or an item's label before the fact ("Changed: …", "Wagely 5.3 — 2026-02-25: New: …").
_LABEL = re.compile(r"^(?:[^:]{1,60}:\s+)+")
_SUBJECT_WORDS = 2  # "extra label", "support hours": a head noun is among the first two words


def question_subject(question: str) -> frozenset[str]:
    """The stems of the first words of a wh-question's subject, up to its first stopword, or none when it
    has none we can tell ("How quickly do refunds reach us?" → refund, reach; "What is the fee?" → fee)."""
    match = _WH_SUBJECT.match(question)
    if match is None:
        return frozenset()
    found: list[str] = []
    for word in words(match.group("subject")):
        if word in STOPWORDS:
            if found:
                break
            continue  # "the", "an", "my" before the noun
        found.append(stem(word))
        if len(found) == _SUBJECT_WORDS:
            break
    return frozenset(found)


def opens_with(sentence: str, subject: frozenset[str]) -> bool:
    """The sentence's first word (after "a", "the" …), or the first word after its labels, is one of the
    subject's (stems)."""
    for text in (sentence, _LABEL.sub("", sentence)):
        first = [w for w in words(text[:80]) if w not in STOPWORDS][:1]
        if first and stem(first[0]) in subject:
            return True
    return False
