"""Verdicts of comparison questions, read off each compared entity's own sentences: "Are X and Y both P?"
is yes only when the sentences about each entity say P; "X or Y: which came first / is older?" is the
entity whose earliest year comes first (or last, for "later" / "younger").

Pure functions on plain sentences; `heuristic.synthesis` turns a verdict into the answer's first sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from investigation.text import capitalised_spans, content_stems, fold

_YES_NO = re.compile(
    r"^\s*(?:[^.?!]*[.!]\s+)?(?:are|is|was|were|do|does|did|has|have|had|can|could|will|would)\b",
    re.IGNORECASE,
)
_WH = re.compile(r"\b(?:which|what|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
# Words that frame the comparison rather than say what is compared ("both", "also", "same", "one").
_FRAME = frozenset({"both", "also", "too", "same", "one", "each", "either", "neither", "member", "members"})
_SAME = re.compile(r"\bsame\s+([a-z]+)", re.IGNORECASE)
_EARLIER = re.compile(
    r"\b(?:first|earlier|earliest|older|oldest|before|sooner|longer\s+ago)\b", re.IGNORECASE
)
_LATER = re.compile(
    r"\b(?:later|latest|newer|newest|younger|youngest|more\s+recent(?:ly)?|most\s+recent(?:ly)?|"
    r"last)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_YES_SHARE = 2 / 3  # share of the predicate's terms each entity's sentences must hold for a "yes"


def is_yes_no(question: str) -> bool:
    """A question answered by yes or no ("Are X and Y both…?", "X has an OBE. Does Y also have one?")."""
    last = re.split(r"(?<=[.!])\s+", question.strip())[-1]
    return bool(_YES_NO.match(last)) and not _WH.search(last)


def predicate_stems(question: str, entities: Sequence[str]) -> set[str]:
    """What both entities are asked to be or have: the question's terms minus the names and the framing."""
    named = set().union(*(content_stems(e) for e in entities)) if entities else set()
    return content_stems(question) - named - _FRAME


def _share(predicate: set[str], sentences: Sequence[str]) -> float:
    if not predicate:
        return 0.0
    said = set().union(*(content_stems(s) for s in sentences)) if sentences else set()
    return len(predicate & said) / len(predicate)


def both_verdict(question: str, entities: Sequence[str], about: Sequence[Sequence[str]],
                 broad: frozenset[str] = frozenset()) -> bool | None:
    """Yes/no for "are both …" / "… the same …": `about[i]` are the sentences about `entities[i]`; `broad`
    holds folded names too common in the evidence to tell two things apart ("United States").
    None when an entity has no sentence at all (nothing to judge on)."""
    if len(entities) < 2 or any(not s for s in about):
        return None
    same = _SAME.search(question)
    if same:
        return _same_value(entities, about, broad)
    predicate = predicate_stems(question, entities)
    if not predicate:
        return None
    return all(_share(predicate, sentences) >= _YES_SHARE - 1e-9 for sentences in about)


def _values(entity: str, sentences: Sequence[str], names: set[str], broad: frozenset[str]) -> set[str]:
    key = fold(entity)
    out: set[str] = set()
    for sentence in sentences:
        for span in capitalised_spans(sentence):
            folded = fold(span)
            if (
                folded in broad
                or folded in key
                or key in folded
                or any(folded in n or n in folded for n in names)
            ):
                continue
            if _YEAR.fullmatch(span) or len(folded) < 3:
                continue
            out.add(folded)
    return out


def _same_value(entities: Sequence[str], about: Sequence[Sequence[str]], broad: frozenset[str]) -> bool:
    """Two things share "the same X" only when their sentences name a common specific place, group or work."""
    names = {fold(e) for e in entities}
    values = [_values(e, s, names, broad) for e, s in zip(entities, about, strict=True)]
    return bool(set.intersection(*values)) if values else False


def earliest_year(sentences: Sequence[str]) -> int | None:
    years = [int(y) for s in sentences for y in _YEAR.findall(s)]
    return min(years) if years else None


def temporal_winner(question: str, about: Sequence[Sequence[str]]) -> int | None:
    """Index of the entity a "which came first / is older / is newer" question asks for, by each entity's
    earliest year (its founding, birth or first release); None when the question is not temporal or a
    year is missing or tied."""
    later = bool(_LATER.search(question))
    if not later and not _EARLIER.search(question):
        return None
    years = [earliest_year(s) for s in about]
    if len(years) < 2 or any(y is None for y in years) or len(set(years)) < len(years):
        return None
    known = [y for y in years if y is not None]
    target = max(known) if later else min(known)
    return known.index(target)


def _base(title: str) -> str:
    return fold(re.sub(r"\s*\([^)]*\)\s*$", "", title)).strip()


def about(name: str, sentences: Sequence[tuple[str, str]]) -> list[str]:
    """The sentences about a compared entity (`sentences`: text and passage title): those of its own
    passage and those naming it."""
    key = fold(name)
    own = [
        text
        for text, title in sentences
        if key in fold(title) or _base(title) in (key, key.removeprefix("the "))
    ]
    return own + [text for text, _title in sentences if key in fold(text) and text not in own]


def broad_names(texts: Sequence[str]) -> frozenset[str]:
    """Names so common in the evidence that sharing them tells two things apart from nothing ("United
    States")."""
    counts: dict[str, int] = {}
    for text in texts:
        for span in {fold(s) for s in capitalised_spans(text)}:
            counts[span] = counts.get(span, 0) + 1
    return frozenset(n for n, k in counts.items() if k >= max(3, len(texts) // 3))


_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can't|isn't|aren't|doesn't|don't|won't|unavailable|unsupported|"
    r"excluded)\b",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(r"\bor\b", re.IGNORECASE)


# Inflections the index stemmer keeps apart ("invoices" → "invoic", "invoice"; "paying", "pay"): a yes/no
# question reworded with another inflection ("… for paying invoices?") still says what the lead says. Only
# this answer-side comparison folds them; the stems the indexes use are unchanged.
_INFLECTION = re.compile(r"(?:ing|ed|es|e|s)$")


def _forms(stems: set[str]) -> set[str]:
    """The stems without an inflection's ending (`_INFLECTION`), when three letters or more are left."""
    return {b if len(b := _INFLECTION.sub("", s)) >= 3 else s for s in stems}


def yes_no_prefix(question: str, lead: str) -> str:
    """"Yes: " / "No: " before the lead sentence of a yes/no question ("Can we pay EUR invoices by SEPA direct
    debit?"): No when the lead negates right next to what is asked ("… already scanned cannot be voided"),
    Yes when it names everything the question names and says most of what it asks; else nothing (the
    sentence speaks for itself). Not for "X or Y?" questions, which ask to choose."""
    ask = re.split(r"(?<=[.!?])\s+", question.strip())[-1]
    if not is_yes_no(ask) or _ALTERNATIVE.search(ask):
        return ""
    asked = content_stems(ask)
    tokens = re.findall(r"[\w'-]+", lead)
    for i, token in enumerate(tokens):
        if _NEGATION.fullmatch(token) and content_stems(" ".join(tokens[max(0, i - 4): i + 5])) & asked:
            return "No: "
    names = [fold(n) for n in capitalised_spans(ask)] + [fold(q) for q in re.findall(r"\b[A-Z]{2,}\b", ask)]
    asked, said = _forms(asked), _forms(content_stems(lead))
    if names and all(n in fold(lead) for n in names) and len(asked & said) >= 0.6 * len(asked):
        # What is asked of the names must be said too: a sentence listing a fact per country ("in the US …;
        # in Germany …") names them all without saying "pay staff … from one company".
        predicate = asked - _forms(content_stems(" ".join(names)))
        if len(predicate & said) >= 0.6 * len(predicate):
            return "Yes: "
    return ""


def answers_no(sentence: str, question: str) -> bool:
    """A yes/no question's words said back with a negation the question lacks ("Is phone support included on
    Basic?" → "Phone support is not included on Basic"): not a restatement but the answer, No."""
    ask = re.split(r"(?<=[.!?])\s+", question.strip())[-1]
    return is_yes_no(ask) and bool(_NEGATION.search(sentence)) and not _NEGATION.search(ask)
