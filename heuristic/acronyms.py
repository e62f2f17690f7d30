"""Acronyms the evidence spells out: a question saying "US", "UK" or "SLA" is about what a sentence says of
"United States", "United Kingdom" or "Service Level Agreement" (a regional table's row, a policy's heading).
A sentence holding the spelled-out name counts as holding the acronym's term; one holding a technical acronym
("SMS") holds the everyday words a ticket says it in ("text message", `EVERYDAY`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from heuristic.chains import Sentence
from investigation.text import content_stems, fold

# Technical acronyms a ticket says in everyday words ("by text message" where the help center writes "SMS").
EVERYDAY = {"text message": "sms", "text messages": "sms", "texts": "sms", "texting": "sms",
            "two factor": "2fa", "single sign": "sso"}

# An acronym of the question: two to four capitals, alone ("US", "UK", "SLA"; not "ERR_4030").
_ACRONYM = re.compile(r"(?<![\w-])[A-Z]{2,4}(?![\w-])")
# A capitalised name of two to four words, each starting with a capital.
_SPELLED = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+|and\s+)?[A-Z][a-z]+){1,3}\b")


def _initials(name: str) -> str:
    return "".join(w[0] for w in name.split() if w[0].isupper())


def spelled_out(question: str, candidates: Sequence[Sentence]) -> list[Sentence]:
    """`candidates`, each sentence that spells out an acronym of the question (initials in order, "United
    States" for "US") holding that acronym's term as well, and each naming an acronym the question says in
    everyday words ("SMS" for "text message") holding those words; the others as they are."""
    acronyms = {a for a in _ACRONYM.findall(question)}
    folded = fold(question)
    everyday = {acronym: content_stems(phrase) for phrase, acronym in EVERYDAY.items() if phrase in folded}
    if not acronyms and not everyday:
        return list(candidates)
    out: list[Sentence] = []
    for c in candidates:
        held = {fold(a) for a in acronyms for name in _SPELLED.findall(c.text) if _initials(name) == a}
        text = fold(c.text)
        held.update(s for acronym, stems in everyday.items() if re.search(rf"\b{acronym}\b", text)
                    for s in stems)
        out.append(replace(c, stems=c.stems | held) if held - c.stems else c)
    return out
