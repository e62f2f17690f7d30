"""Whom a support sentence's leading "It" means: the name the sentence before it opened with.

For questions about a named product, plan or feature whose value sits in a follow-up sentence ("Parcelo
Protect insures a parcel up to $5,000. It costs 1% of the declared value." for "How much does Parcelo Protect
cost?"): quoted alone, "It costs 1% …" names nothing the question asks about, so it neither scores nor reads
as the answer. `resolve_pronoun` puts the carried name in place of the "It".
"""

from __future__ import annotations

import re

from investigation.text import STOPWORDS, fold

# A sentence opening with a capitalised name ("Parcelo Protect", "Wagely") and a verb of a singular subject
# ("insures", "is", "can"); an all-capitals last word ("API keys are …") is a modifier, not the subject.
_SUBJECT = re.compile(
    r"^(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,3})\s+(?P<verb>[a-z][a-z-]*)\b"
)
_MODALS = frozenset(["is", "was", "has", "can", "will", "does", "must", "may", "should", "cannot"])


def leading_name(sentence: str) -> str:
    """The name a sentence opens with as its subject ("Parcelo Protect" of "Parcelo Protect insures …"), or
    "" when it opens otherwise ("The plan …", "If you …", "API keys are …")."""
    found = _SUBJECT.match(sentence)
    if found is None:
        return ""
    name, verb = found.group("name"), found.group("verb")
    first, last = name.split()[0], name.split()[-1]
    if fold(first) in STOPWORDS or last.isupper() or not (verb in _MODALS or verb.endswith("s")):
        return ""
    return name


_PRONOUN = re.compile(r"^(?:(He|She|They|It)|(His|Her|Their|Its))\s+(?=[a-z0-9])")


def resolve_pronoun(sentence: str, subject: str, *, work: bool = False) -> str:
    """A sentence quoted out of its passage says whom it is about: in a passage named after a person or a
    thing, a leading "He"/"She"/"It"/"They" becomes the name ("He was a Formula One driver" → "Eddie Irvine
    was a Formula One driver"), "His"/"Her"/"Its"/"Their" the name's possessive; in a passage about a `work`
    (a film, a song, a company) only "It"/"Its" is the work; "He", "She", "They" are people and stay."""
    found = _PRONOUN.match(sentence)
    if not subject or not found or fold(subject) in fold(sentence):
        return sentence
    if work and (found.group(1) or found.group(2)) not in ("It", "Its"):
        return sentence  # a work's "He" is its author, its "They" its performers
    name = subject if found.group(1) else f"{subject}'s"
    return f"{name} {sentence[found.end():]}"
