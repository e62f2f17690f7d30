"""Whether a capitalised phrase is a name at all, and its canonical form: the generic words capitalisation
lets through, a title without its disambiguation, a span without the sentence-opening words it caught."""

from __future__ import annotations

import re

from investigation.memo import memoised
from investigation.text import NAME_CONNECTORS, QUESTION_WORDS, STOPWORDS, TEXT_CACHE_SIZE, fold, words
from investigation.wordlists import MONTHS, WEEKDAYS

# Capitalised words that are rarely what a question hinges on.
_GENERIC_NAMES: frozenset[str] = frozenset(
    [
        "american",
        "british",
        "english",
        "french",
        "german",
        "italian",
        "spanish",
        "russian",
        "chinese",
        "japanese",
        "korean",
        "indian",
        "canadian",
        "australian",
        "irish",
        "scottish",
        "welsh",
        "dutch",
        "swedish",
        "norwegian",
        "danish",
        "finnish",
        "polish",
        "greek",
        "turkish",
        "mexican",
        "brazilian",
        "european",
        "african",
        "asian",
        "latin",
        "christian",
        "catholic",
        "jewish",
        "muslim",
        "western",
        "eastern",
        "northern",
        "southern",
        *MONTHS[:12],
        *WEEKDAYS,
        "he",
        "she",
        "it",
        "they",
        "his",
        "her",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "i",
        "we",
        "you",
        "according",
        "however",
        "although",
        "also",
        "after",
        "before",
        "during",
        "while",
        "since",
        "when",
        "then",
        "later",
    ]
)


def specificity(name: str) -> float:
    tokens = words(name)
    if not tokens:
        return 0.0
    if len(tokens) == 1:
        token = tokens[0]
        if token in _GENERIC_NAMES or token in STOPWORDS or token in QUESTION_WORDS:
            return 0.0
        return 0.7 if not token.isdigit() else 0.3
    return 1.0


@memoised(TEXT_CACHE_SIZE)  # asked of every passage title in every hop
def base_title(title: str) -> str:
    """A title without its disambiguation: "Brand (play)" → "brand"."""
    return fold(re.sub(r"\s*\([^)]*\)\s*$", "", title)).strip()



_MONTH_OR_NUMBER = re.compile(
    r"^(?:\d[\d,.]*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?)$")


def is_name_like(name: str) -> bool:
    """False for dates, numbers and generic words that the capitalisation heuristic lets through."""
    tokens = words(name)
    meaningful = [t for t in tokens if not _MONTH_OR_NUMBER.match(t) and t not in _GENERIC_NAMES
                  and t not in STOPWORDS and len(t) > 1]
    return bool(meaningful) and any(c.isalpha() for c in name) and len(name) >= 3



@memoised(TEXT_CACHE_SIZE // 4)
def _lower_case_words(passage: str) -> frozenset[str]:
    """The words a passage writes in lower case (a property of the passage alone: read once)."""
    return frozenset(re.findall(r"(?<![\w-])[a-z][a-z'-]*", passage))


def clean_name(name: str, sentence: str, passage: str) -> str:
    """A capitalised span without the sentence-opening words the capitalisation let in ("Go to Settings" →
    "Settings", "No. The Free" → "Free"): a leading word is dropped when the span opens the sentence and
    the passage also writes that word in lower case, or it is a stopword."""
    opens = sentence.lstrip(" #*-\"“").startswith(name.split()[0]) if name.split() else False
    lower = _lower_case_words(passage)
    head, dot, rest = name.partition(". ")
    if (
        dot
        and len(head.split()) == 1
        and (fold(head) in STOPWORDS or fold(head) in lower or fold(head) == "yes")
    ):
        # "No. The Free": what follows the full stop opens a sentence ("W. Fawell" stays)
        name, opens = rest, True
    tokens = name.split()
    if len(tokens) < 2 or not opens:
        return name
    while len(tokens) > 1 and (fold(tokens[0]) in STOPWORDS or fold(tokens[0]) in lower
                               or fold(tokens[0]) in NAME_CONNECTORS):
        tokens = tokens[1:]
    while len(tokens) > 1 and fold(tokens[0]) in NAME_CONNECTORS:
        tokens = tokens[1:]
    return " ".join(tokens)
