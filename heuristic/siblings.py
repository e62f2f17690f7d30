"""A value asked of one named thing that the passages give only for the others of its kind.

Serves questions that ask a value of a named member of a group ("What is the maximum weight DHL Express
accepts?"), where the knowledge base lists the member with its peers ("14 carriers: USPS, UPS, FedEx, DHL
Express, …") and gives the value for some peers ("UPS and FedEx accept up to … 150 lb") but never for the one
asked. The peers' values are not its value: the question is not answered here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.focus import focus_names
from heuristic.kinds import answer_kind, ask_clauses
from investigation.state import Evidence
from investigation.text import ask_sentence, capitalised_spans, content_stems, fold, split_sentences

# At least this many peers must hold the value where the asked name never does.
_PEERS_WITH_VALUE = 2
# A relative clause or a second wh-word: the value may be of something the question reaches through the name
# ("… the sitcom that premiered on which date?", "… the lowest plan that supports SSO?"), not of the name.
_WH = re.compile(r"\b(?:what|which|who|whom|whose|where|when|how|that)\b", re.IGNORECASE)
# An amount is asked (a limit, a count, a price, a duration): what each member of a group has its own of.
# Places, dates and names are not: a member's place is asked through it as often as of it.
_AMOUNT_ASKED = re.compile(r"\b(?:how\s+(?:many|much|long|often|heavy|big|large|fast)|maximum|minimum|max|"
                           r"min|limits?|costs?|price|fees?)\b", re.IGNORECASE)


def _mentions(name: str, sentence: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(fold(name)) + r"(?!\w)", fold(sentence)) is not None


def value_only_for_peers(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The question's name (as written) when a value of the asked kind is given, next to the asked words, for
    at least two of the names listed with it but never for it; [] otherwise. Only for a question that asks
    one value of its name (one asking clause, no relative clause)."""
    ask = ask_sentence(question)
    if (not evidence or not _AMOUNT_ASKED.search(ask) or len(_WH.findall(ask)) != 1
            or len(ask_clauses(question)) != 1):
        return []
    kind = answer_kind(question)
    if kind is None:
        return []
    sentences = [s for e in evidence for s in split_sentences(e.text)]
    texts = [fold(f"{e.title} {e.text}") for e in evidence]
    text_stems = [content_stems(t) for t in texts]
    for name in focus_names(ask):
        holders = sum(_mentions(name, t) for t in texts)
        if holders == 0 or 2 * holders > len(texts):  # absent (another rule's) or the product itself
            continue
        # The asked words beyond the name, but those most passages hold (the product, its main object).
        asked = {s for s in content_stems(ask) - content_stems(name)
                 if 2 * sum(s in stems for stems in text_stems) <= len(texts)}
        if not asked:
            continue
        typed = [s for s in sentences if kind.search(s) and content_stems(s) & asked]
        if not typed or any(_mentions(name, s) for s in typed):
            continue
        peers = {fold(p) for s in sentences if _mentions(name, s) and "," in s
                 for p in capitalised_spans(s) if fold(p) != fold(name)}
        with_value = {p for p in peers if any(_mentions(p, s) for s in typed)}
        if len(with_value) >= _PEERS_WITH_VALUE:
            return [name]
    return []
