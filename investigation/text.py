"""Text utilities of the heuristic loop: sentences, quoted titles, capitalised names, numbers and dates, and
the one import for the rest (words, folding and stems from `investigation.tokens`, the word lists from
`investigation.wordlists`).

Everything here is deterministic and dependency-free; matching is accent- and case-insensitive.
"""

from __future__ import annotations

import re

from investigation.memo import memoised
from investigation.tokens import (
    _TOKEN,
    _TOKEN_ASCII,
    _WORD,
    _WORD_ASCII,
    TEXT_CACHE_SIZE,
    _content_stems,
    _content_words,
    _words,
    body_stems,
    content_stems,
    content_words,
    count_tokens,
    fold,
    overlap,
    padded_words,
    passage_words,
    query_key,
    stem,
    words,
)
from investigation.wordlists import ABBREVIATIONS as _ABBREV
from investigation.wordlists import MONTHS, NAME_CONNECTORS, QUESTION_WORDS, STOPWORDS

__all__ = [
    "MONTHS", "NAME_CONNECTORS", "QUESTION_WORDS", "STOPWORDS", "TEXT_CACHE_SIZE", "_ABBREV", "_TOKEN",
    "_TOKEN_ASCII", "_WORD", "_WORD_ASCII", "_content_stems", "_content_words", "_words", "ask_sentence",
    "body_stems", "capitalised_spans", "content_stems", "content_words", "count_tokens", "dates", "entities",
    "fold", "numbers", "overlap", "padded_words", "passage_words", "query_key", "quoted_titles",
    "split_sentences", "stem", "words",
]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
_NUMBER = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
_DATE = re.compile(
    r"\b(?:\d{1,2}\s+)?(?:" + "|".join(m.capitalize() for m in MONTHS[:12]) + r")(?:\s+\d{1,2})?,?\s+\d{4}\b"
)


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences without breaking on common abbreviations or initials."""
    return list(_sentences(text))


@memoised(TEXT_CACHE_SIZE)
def _sentences(text: str) -> tuple[str, ...]:
    pieces = _SENTENCE_END.split(text.strip())
    sentences: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if sentences:
            last_word = sentences[-1].rstrip(".!?").rsplit(" ", 1)[-1]
            if (fold(last_word) in _ABBREV or (len(last_word) == 1 and last_word.isupper())
                    or _clock_zone(last_word, piece)):
                sentences[-1] = f"{sentences[-1]} {piece}"
                continue
        sentences.append(piece.strip())
    return tuple(sentences)


# "from 8 a.m. to 8 p.m. Eastern Time, Monday to Friday": a time of day goes on with its time zone.
_TIME_ZONES = frozenset(["eastern", "pacific", "central", "mountain", "et", "pt", "ct", "mt", "est", "pst",
                         "utc", "gmt", "cet", "cest", "bst", "aest", "local"])


def _clock_zone(last_word: str, piece: str) -> bool:
    """The sentence so far ends with "a.m."/"p.m." and the next piece starts with a time zone."""
    if fold(last_word).rstrip(".") not in ("a.m", "p.m"):
        return False
    first = piece.split(" ", 1)[0].strip(",;:")
    return fold(first) in _TIME_ZONES


def quoted_titles(text: str) -> list[str]:
    """Titles written in quotes: '"Wonderland by Night"' → 'Wonderland by Night'."""
    return list(_quoted_titles(text))


@memoised(TEXT_CACHE_SIZE)
def _quoted_titles(text: str) -> tuple[str, ...]:
    return tuple(m.group(1).strip(" ,.") for m in _QUOTED.finditer(text))


def _is_capitalised(token: str) -> bool:
    return bool(token) and (token[0].isupper() or (token[0].isdigit() and any(c.isalpha() for c in token)))


def capitalised_spans(text: str) -> list[str]:
    """Runs of capitalised words (with name connectors inside), e.g. "Johann Strauss II", "Bank of America".

    A sentence-initial question word or stopword is not a name ("Who", "The" in "The director ...");
    punctuation ends a run; a possessive ends it unless a capitalised word follows ("Woman's Viewpoint").
    """
    return list(_capitalised_spans(text))


@memoised(TEXT_CACHE_SIZE)
def _capitalised_spans(text: str) -> tuple[str, ...]:
    spans: list[str] = []
    tokens = re.findall(r"[^\s,;:!?()\[\]\"“”]+|[,;:!?()\[\]\"“”]", text)
    current: list[str] = []
    pending: list[str] = []  # connectors seen after a capitalised word

    def flush() -> None:
        if current:
            span = " ".join(current).strip(".'’")
            if span.endswith(("'s", "’s")):
                span = span[:-2]
            if span:
                spans.append(span)
        current.clear()
        pending.clear()

    sentence_start = True
    for raw in tokens:
        if len(raw) == 1 and not raw.isalnum():
            if current:  # (`pending` is only ever filled behind a word of `current`)
                flush()
            sentence_start = sentence_start or raw in "!?"
            continue
        ends_sentence = raw.endswith(".") and len(raw) > 2 and fold(raw.rstrip(".")) not in _ABBREV
        token = raw.rstrip(".") if ends_sentence else raw
        # Folded only where a word list is asked: most words of a passage are lower-case words outside any
        # run.
        if current and not pending and token.isdigit() and len(token) <= 3:
            current.append(token)  # "Big Hero 6", "Apollo 11"
        elif _is_capitalised(token) and not (sentence_start and ((low := fold(token)) in QUESTION_WORDS
                                                                 or low in STOPWORDS)):
            current.extend(pending)
            pending.clear()
            current.append(token)
        elif current and fold(token) in NAME_CONNECTORS:
            pending.append(token)
        elif current:
            flush()
        sentence_start = ends_sentence
        if ends_sentence:
            flush()
        elif current and current[-1].endswith(("'s", "’s")):
            pending.clear()
    flush()
    return tuple(spans)


def numbers(text: str) -> list[str]:
    """Numbers as written ("1,890", "6.8", "1986")."""
    return [m.group(0).rstrip(",") for m in _NUMBER.finditer(text)]




def dates(text: str) -> list[str]:
    """Dates with a month name ("8 June 1951", "September 23, 1962")."""
    return [m.group(0) for m in _DATE.finditer(text)]


def entities(text: str) -> list[str]:
    """Quoted titles first, then capitalised spans, de-duplicated (folded), in order of appearance."""
    return list(_entities(text))


@memoised(TEXT_CACHE_SIZE)
def _entities(text: str) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for candidate in [*_quoted_titles(text), *_capitalised_spans(text)]:
        key = fold(candidate)
        if any(key in other for other in seen if len(other) > len(key)):
            continue  # a word of a quoted title already kept
        if key and key not in seen and key not in STOPWORDS and key not in QUESTION_WORDS:
            seen.add(key)
            out.append(candidate)
    return tuple(out)



_ASKING = re.compile(
    r"\?\s*$|^\s*(what|how|when|where|why|which|who|whom|whose|can|could|do|does|did|is|are|was|were|"
    r"will|would|should|shall|may)\b"
    # a question asked inside a statement: "Our advisor wants to know how long …", "Please tell us whether …"
    r"|\b(?:know|wondering|tell\s+(?:me|us)|find\s+out)\s+(?:how|what|when|where|why|which|who|whether|if)\b",
    re.IGNORECASE,
)


# A one-sentence ticket that tells its situation in a leading clause and asks after the comma ("Since we
# started getting ERR_4030, how long until our data is deleted?"): the asking clause.
_TOLD_THEN_ASKED = re.compile(
    r"^\s*(?:since|after|because|as|now\s+that|once|given\s+that)\b[^,?]{6,},\s*"
    r"(?P<ask>(?:what|how|when|where|why|which|who|whom|whose|can|could|do|does|did|is|are|was|were|will|"
    r"would|should|shall|may)\b[^,]*\?)\s*$",
    re.IGNORECASE,
)


@memoised(TEXT_CACHE_SIZE)
def ask_sentence(question: str) -> str:
    """The sentence of a multi-sentence ticket that asks ("We moved to AP-1 … . Which URL should we use?" →
    "Which URL should we use?"), or the whole question when it is one sentence or asks nowhere clearly."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", question.strip()) if s.strip()]
    if len(sentences) < 2:
        told = _TOLD_THEN_ASKED.match(question)
        return told.group("ask") if told and len(_content_words(told.group("ask"))) >= 2 else question
    asks = [s for s in sentences if _ASKING.search(s) and len(_content_words(s)) >= 2]
    return asks[0] if len(asks) == 1 else question
