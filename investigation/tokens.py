"""Words of a text, as the heuristic loop compares them: folding (case and accents), word and token counts,
stems, content words, and the cached forms of each.

Everything here is deterministic and dependency-free; `investigation.text` re-exports it all."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

from investigation.memo import memoised
from investigation.wordlists import STOPWORDS

# Entries per text cache (investigation/memo.py): the passages, titles, names and queries of a couple of
# thousand chunks fit, so a worker reads each passage once, and a process's caches stay in the tens of
# megabytes when full.
TEXT_CACHE_SIZE = 8192

_WORD = re.compile(r"[^\W_]+(?:['’\-.][^\W_]+)*", re.UNICODE)
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# The same two patterns for ASCII text (`str.isascii`, a flag of the string: no scan), with plain character
# ranges that the matcher tests a quarter faster than Unicode's categories. Exactly what the Unicode
# patterns match on ASCII: there `\w` is [A-Za-z0-9_], and `\s` is what `str.isspace` says, which includes
# the separators \x1c-\x1f (re.ASCII's `\s` would not: not used for that reason); checked character for
# character in tests/unit/investigation/test_text_ascii.py.
_WORD_ASCII = re.compile(r"[A-Za-z0-9]+(?:['\-.][A-Za-z0-9]+)*")
_TOKEN_ASCII = re.compile(r"[A-Za-z0-9_]+|[^A-Za-z0-9_\s\x1c-\x1f]")


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
    # A final "ss" is no plural ("process", "access", "address"): they stem like "processed", "accesses".
    for suffix, size, to_y in _SUFFIXES:
        if size <= room and word.endswith(suffix) and not (size == 1 and word.endswith("ss")):
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



def overlap(query_stems: set[str], text: str) -> float:
    """Share of `query_stems` present in `text` (0 when the query has no content words)."""
    if not query_stems:
        return 0.0
    return len(query_stems & _content_stems(text)) / len(query_stems)

