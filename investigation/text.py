"""Text utilities of the heuristic loop: tokens, stopwords, sentences, and entity/title/number extraction.

Everything here is deterministic and dependency-free; matching is accent- and case-insensitive.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

from investigation.memo import memoised

# Entries per text cache (investigation/memo.py): the passages, titles, names and queries of a couple of
# thousand chunks fit, so a worker reads each passage once, and a process's caches stay in the tens of
# megabytes when full.
TEXT_CACHE_SIZE = 8192

STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "either",
        "ever",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "much",
        "must",
        "my",
        "myself",
        "neither",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "very",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "whatever",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "o",
        "one",
        "ones",
        "thing",
        "things",
        "something",
        "anything",
        "else",
        "many",
        "known",
        "called",
        "named",
        "name",
        "kind",
        "type",
        "part",
    ]
)

# Words that start a question and are capitalised only because they start it.
QUESTION_WORDS: frozenset[str] = frozenset(
    [
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "name",
        "list",
        "tell",
        "give",
        "in",
        "on",
        "at",
        "of",
        "from",
        "the",
        "a",
        "an",
        "both",
        "between",
        "besides",
        "this",
        "these",
        "during",
        "since",
        "if",
        "for",
        "to",
        "by",
        "as",
        "after",
        "before",
    ]
)

# Lower-case words that may sit inside a capitalised name ("Bank of America", "Ludwig van Beethoven").
NAME_CONNECTORS: frozenset[str] = frozenset(
    [
        "of",
        "the",
        "de",
        "del",
        "della",
        "der",
        "di",
        "du",
        "da",
        "van",
        "von",
        "la",
        "le",
        "den",
        "y",
        "&",
        "to",
        "from",
        "for",
        "a",
        "an",
        "with",
        "by",
        "upon",
    ]
)

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
]

_WORD = re.compile(r"[^\W_]+(?:['’\-.][^\W_]+)*", re.UNICODE)
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# The same two patterns for ASCII text (`str.isascii`, a flag of the string: no scan), with plain character
# ranges that the matcher tests a quarter faster than Unicode's categories. Exactly what the Unicode
# patterns match on ASCII: there `\w` is [A-Za-z0-9_], and `\s` is what `str.isspace` says, which includes
# the separators \x1c-\x1f (re.ASCII's `\s` would not: not used for that reason); checked character for
# character in tests/unit/investigation/test_text_ascii.py.
_WORD_ASCII = re.compile(r"[A-Za-z0-9]+(?:['\-.][A-Za-z0-9]+)*")
_TOKEN_ASCII = re.compile(r"[A-Za-z0-9_]+|[^A-Za-z0-9_\s\x1c-\x1f]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
_NUMBER = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})s?\b")
_DATE = re.compile(
    r"\b(?:\d{1,2}\s+)?(?:" + "|".join(m.capitalize() for m in MONTHS[:12]) + r")(?:\s+\d{1,2})?,?\s+\d{4}\b"
)
_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "st",
    "jr",
    "sr",
    "vs",
    "no",
    "inc",
    "ltd",
    "co",
    "mt",
    "ft",
    "u.s",
    "e.g",
    "i.e",
}


@memoised(TEXT_CACHE_SIZE)
def fold(text: str) -> str:
    """Lower-case and strip accents, so "Aschenbrödel" matches "Aschenbrodel"."""
    if text.isascii():  # NFKD leaves ASCII as it is and there is nothing to strip: the same result, at once
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return decomposed.translate(_NOT_COMBINING).lower().replace("’", "'")


class _CombiningMarks(dict[int, int | None]):
    """`str.translate` table that drops combining marks (what `unicodedata.combining` says is one) and keeps
    every other character: filled on first sight of each character, so a text costs one C-level pass."""

    def __missing__(self, codepoint: int) -> int | None:
        kept = None if unicodedata.combining(chr(codepoint)) else codepoint
        self[codepoint] = kept
        return kept


_NOT_COMBINING = _CombiningMarks()


@memoised(TEXT_CACHE_SIZE)
def count_tokens(text: str) -> int:
    """A model-free token estimate: words plus punctuation marks."""
    return len((_TOKEN_ASCII if text.isascii() else _TOKEN).findall(text))


@memoised(TEXT_CACHE_SIZE)
def _words(text: str) -> tuple[str, ...]:
    folded = fold(text)
    # A match starts and ends with a letter or digit (`_WORD`), so there is no "." or "'" to strip at its
    # ends, and it is never empty without its "'s".
    found = (_WORD_ASCII if folded.isascii() else _WORD).findall(folded)
    if "'s" in folded:
        found = [word.removesuffix("'s") for word in found]
    intern = sys.intern  # one object per distinct word across every cached tuple
    if "-" not in folded:  # no hyphenated word to split: the loop below would add nothing else
        return tuple(map(intern, found))
    out: list[str] = []
    add = out.append
    for word in found:
        add(intern(word))
        if "-" in word:
            out.extend(intern(part) for part in word.split("-") if part)
    return tuple(out)


def words(text: str) -> list[str]:
    """Folded word tokens, possessive `'s` removed, hyphenated words kept whole and split."""
    return list(_words(text))


@memoised(TEXT_CACHE_SIZE)
def padded_words(text: str) -> str:
    """The folded words of `text` joined by spaces, with one space before and after: a phrase's padded
    words are in it exactly when the phrase occurs as whole words (name containment, phrase position)."""
    return f" {' '.join(_words(text))} "


# (suffix, its length, whether the stem ends in "y"), tried in this order: the first that fits is removed.
_SUFFIXES = tuple((suffix, len(suffix), suffix in ("ies", "ied", "ities")) for suffix in (
    "ization", "ational", "ations", "ation", "ings", "ing", "ness", "ments", "ment",
    "ities", "ity", "ers", "ors", "er", "or", "ies", "ied", "es", "ed", "ly", "s"))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to equate "directed"/"director"/"directors", "films"/"film"."""
    room = len(word) - 4  # a stem keeps at least 4 characters
    for suffix, size, to_y in _SUFFIXES:
        if size <= room and word.endswith(suffix):
            return word[:-size] + "y" if to_y else word[:-size]
    return word


@memoised(TEXT_CACHE_SIZE)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple([w for w in _words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())])


def content_words(text: str) -> list[str]:
    """Words that carry meaning (no stopwords, no one-letter tokens), in order, folded."""
    return list(_content_words(text))


@memoised(TEXT_CACHE_SIZE)
def query_key(text: str) -> str:
    """The comparison key of a search query: folded content words, in order."""
    return " ".join(_content_words(text))


@memoised(TEXT_CACHE_SIZE)
def _content_stems(text: str) -> frozenset[str]:
    return frozenset(map(stem, _content_words(text)))


def content_stems(text: str) -> set[str]:
    """The set of stems of `content_words(text)`."""
    return set(_content_stems(text))


@memoised(TEXT_CACHE_SIZE)
def body_stems(title: str, text: str) -> frozenset[str]:
    """`content_stems(f"{title} {text}")` (a passage with its title), from the stems of each part: the text
    is not read again behind its title, and the cache holds no copy of it. Shared and read-only (cached,
    frozen): every caller only reads it, so no copy is made per call."""
    # The same set: no word spans the space between the parts (`_WORD`), and folding, possessives and hyphens
    # are handled character by character and word by word (checked on the sample corpora in the tests).
    return _content_stems(title) | _content_stems(text)


def passage_words(title: str, text: str) -> tuple[str, ...]:
    """`words(f"{title}. {text}")` (a passage headed by its title), from each part's cached words: no word
    spans
    the ". " between them (a word's inner "." needs a letter or digit after it). Shared: do not change it."""
    return _words(title) + _words(text)


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
            if fold(last_word) in _ABBREV or (len(last_word) == 1 and last_word.isupper()):
                sentences[-1] = f"{sentences[-1]} {piece}"
                continue
        sentences.append(piece.strip())
    return tuple(sentences)


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


def overlap(query_stems: set[str], text: str) -> float:
    """Share of `query_stems` present in `text` (0 when the query has no content words)."""
    if not query_stems:
        return 0.0
    return len(query_stems & _content_stems(text)) / len(query_stems)


_ASKING = re.compile(
    r"\?\s*$|^\s*(what|how|when|where|why|which|who|whom|whose|can|could|do|does|did|is|are|was|were|"
    r"will|would|should|shall|may)\b",
    re.IGNORECASE,
)


@memoised(TEXT_CACHE_SIZE)
def ask_sentence(question: str) -> str:
    """The sentence of a multi-sentence ticket that asks ("We moved to AP-1 … . Which URL should we use?" →
    "Which URL should we use?"), or the whole question when it is one sentence or asks nowhere clearly."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", question.strip()) if s.strip()]
    if len(sentences) < 2:
        return question
    asks = [s for s in sentences if _ASKING.search(s) and len(_content_words(s)) >= 2]
    return asks[0] if len(asks) == 1 else question
