"""What a question is specifically about, and whether the evidence talks about it at all.

In a knowledge base about one product every passage is "on topic", so similarity cannot tell an
unanswerable question from an answerable one. What can: the question's specific names ("Kubernetes",
"FedRAMP", "Microsoft Teams", "ERR_4030") either occur in some retrieved passage or in none. A name no
passage mentions — after a search that asked for it — means the knowledge base does not cover it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from itertools import pairwise

from heuristic.acronyms import EVERYDAY
from heuristic.asked import (
    ASKED_ABILITY,
    ASKED_ABILITY_TURNED,
    ASKED_ATTRIBUTE,
    ASKED_HELD,
    ASKED_PROVIDER_DOES,
    asked_terms,
)
from heuristic.regions import within_mentioned
from heuristic.vocabulary import Vocabulary
from investigation import memo
from investigation.memo import memoised
from investigation.state import Evidence, Passage
from investigation.text import (
    MONTHS,
    QUESTION_WORDS,
    STOPWORDS,
    TEXT_CACHE_SIZE,
    capitalised_spans,
    fold,
    passage_words,
    quoted_titles,
    stem,
    words,
)
from investigation.wordlists import WEEKDAYS

# `asked_terms` lives in `heuristic.asked`; importable from here too.
__all__ = [
    "asked_terms",
    "focus_names",
    "mentioned",
    "mentioning",
    "missing_names",
    "missing_terms",
    "text_vocabulary",
]
# Capitalised words that say nothing specific (nationalities, weekdays, pronouns, generic product words).
_GENERIC = frozenset([
    "american", "british", "english", "french", "german", "european", "us", "usa", "uk", "eu", "i", "we",
    "you", *WEEKDAYS, "ok", "okay", "please", "thanks", "hi", "hello", "hey", "api", "faq", "id", "ids",
    "url", "urls", "ceo", "it", "hr", "pm", "am", *MONTHS
])
_CODE = re.compile(
    r"\b[A-Za-z]+[_-]?\d+[A-Za-z0-9_-]*\b|\b[a-z]+[A-Z][A-Za-z]*\b|\b[A-Z][a-z]+[A-Z][A-Za-z]*\b"
)


# A number and its unit as one word ("5-minute rounding"): a measure a passage writes "5 minutes", no name.
_MEASURE_WORD = re.compile(r"\d+(?:[.,]\d+)?-[a-z]+(?:-[a-z]+)*")


def _specific(span: str, question: str) -> bool:
    tokens = [w for w in words(span) if w not in STOPWORDS and "'" not in w]
    if not tokens or _MEASURE_WORD.fullmatch(span.strip()) or sum(c.isalpha() for c in span) < 3 or all(
            t in _GENERIC or t[:1].isdigit() for t in tokens):
        return False
    if len(tokens) >= 2:
        return True
    token = span.strip()
    if _CODE.fullmatch(token):
        return True  # ERR_4030, GraphQL, iOS, FedRAMP
    # A single capitalised word that only starts a sentence is usually just a word ("Security wants …").
    starts_sentence = re.search(r"(^|[.!?:;]\s+|\s-\s+)" + re.escape(token) + r"\b", question) is not None
    return not starts_sentence and fold(token) not in QUESTION_WORDS and len(token) > 2


# A contracted question word opening a capitalised span ("What's the Sev 1 …" read as "What's Sev 1"): it
# asks, it names nothing ("What Women Want", uncontracted, may be a title).
_ASKING_OPENER = re.compile(r"^(?:what|who|where|when|which|how|why)(?:'s|\u2019s)\s+(?=\S)", re.IGNORECASE)


def focus_names(question: str) -> list[str]:
    """The specific names of a question: quoted titles, multi-word names, codes and mid-sentence names."""
    out: list[str] = []
    seen: set[str] = set()
    candidates = [*quoted_titles(question), *capitalised_spans(question), *_CODE.findall(question)]
    for span in candidates:
        span = _ASKING_OPENER.sub("", span.strip(" .,'\"")).strip(" .,'\"")
        key = fold(span)
        if key and key not in seen and _specific(span, question):
            seen.add(key)
            out.append(span)
    return out


@lru_cache(maxsize=65536)  # once per distinct word: a passage's vocabulary asks it of every word it holds
def _norm(word: str) -> str:
    """A stem that also equates short plurals ("ids"/"id")."""
    w = stem(word)
    return w[:-1] if len(w) > 2 and w.endswith("s") and not w.endswith("ss") else w


def _parts(name: str) -> list[str]:
    """A name cut at its connectors ("URL for Okta" → "URL", "Okta"; "EU-1 to AP-1" → "EU-1", "AP-1")."""
    parts = re.split(
        r"\s+(?:of|for|to|from|in|on|at|by|with|and|or|the|a|an|de|la|le|van|von|der|du)\s+", name
    )
    return [p for p in parts if p.strip()]


def _plain_words(text: str) -> list[str]:
    """Folded words with hyphenated words given as their parts only ("Kai-shek" → "kai", "shek")."""
    return [w for w in words(text) if "-" not in w]


def _vocabulary(passages: Iterable[tuple[str, str]]) -> tuple[Vocabulary, str]:
    """Stems and joined word pairs ("sev 1" → "sev1") of the passages (title, text), and their folded word
    sequence. Shared and read-only (cached): a caller that adds to it takes a copy."""
    passages = tuple(passages)
    if len(passages) == 1:
        return text_vocabulary(*passages[0])
    return _joined_vocabulary(passages)


@memoised(64)  # the evidence of the last few hops (one entry per evidence list)
def _joined_vocabulary(passages: tuple[tuple[str, str], ...]) -> tuple[Vocabulary, str]:
    vocab: set[str] = set()
    sequences: list[str] = []
    parts: list[Vocabulary] = []
    for title, text in passages:
        text_vocab, sequence = text_vocabulary(title, text)
        vocab |= text_vocab
        sequences.append(sequence)
        parts.append(text_vocab)
    return Vocabulary(vocab, tuple(parts)), " | ".join(sequences)


@memoised(TEXT_CACHE_SIZE // 4)  # one entry per passage, the largest (~8 KB): 2,048 passages
def text_vocabulary(title: str, text: str) -> tuple[Vocabulary, str]:
    """`_vocabulary` of one passage, the words of f"{title}. {text}" (`passage_words`: the text's own words,
    which other checks read too, not a second reading of it behind its title), computed once per passage
    (investigation/memo.py)."""
    every = passage_words(title, text)
    ws = [w for w in every if "-" not in w]  # hyphenated words as their parts only (see `_plain_words`)
    normed = list(map(_norm, ws))  # once per word: the set and the sequence both want them
    vocab = set(normed)
    joined = {w.replace("-", "") for w in every if "-" in w}
    words = vocab | joined
    vocab.update(sys.intern(a + b) for a, b in pairwise(ws))  # pairs repeat across passages: one object
    return Vocabulary(vocab | joined, words=words), " ".join(normed)


def mentioned(name: str, vocab: AbstractSet[str], sequence: str) -> bool:
    """True when `name` occurs in the texts: as a phrase (stemmed words in a row), as one joined token
    ("Sev1" ~ "sev 1"), or as an abbreviation of a word ("Sev 1" ~ "Severity 1")."""
    ws = _plain_words(name)
    joined = "".join(ws)
    if not ws:
        return True
    if joined in vocab:
        return True
    if len(ws) == 1:
        w = ws[0]
        if (
            _norm(w) in vocab
            or w.replace("-", "") in vocab
            or all(_norm(p) in vocab for p in w.split("-") if p)
        ):
            return True
        letters, digits = re.sub(r"\d+$", "", w), re.sub(r"^\D+", "", w)
        if bool(digits) and letters != w and _abbreviates(letters, vocab) and digits in vocab:
            return True
        return _near(w, vocab)
    phrase = [_norm(w) for w in ws]
    padded = f" {sequence} "
    if f" {' '.join(phrase)} " in padded or _in_window(phrase, sequence, padded):
        return True
    return len(ws) == 2 and ws[1].isdigit() and _abbreviates(ws[0], vocab) and ws[1] in vocab


def _in_window(phrase: list[str], sequence: str, padded: str, gap: int = 2) -> bool:
    """The words of `phrase` in order with at most `gap` words between two of them ("Captain John H. Miller"
    for "Captain Miller"); `padded` is f" {sequence} ", which the caller has built already."""
    if any(w and f" {w} " not in padded for w in phrase):  # a match holds every word whole
        return False
    return _window(tuple(phrase), gap).search(sequence) is not None


@lru_cache(maxsize=4096)  # compiled once per phrase (re's own cache holds 512 patterns of any kind)
def _window(phrase: tuple[str, ...], gap: int) -> re.Pattern[str]:
    between = rf"(?:\s+\S+){{0,{gap}}}\s+"
    return re.compile(r"(?<!\S)" + between.join(re.escape(w) for w in phrase) + r"(?!\S)")


def _near(word: str, vocab: AbstractSet[str]) -> bool:
    """A misspelling of a word of the texts ("Brittish" ~ "british", "Gothais" ~ "gotha")."""
    if len(word) < 5 or not word.isalpha():
        return False
    if not (isinstance(vocab, Vocabulary) and memo.enabled()):
        return _near_in(word, vocab.words if isinstance(vocab, Vocabulary) else vocab)
    found = vocab.near.get(word)
    if found is None:
        # Near a word of the union iff near a word of one of its parts (`_near_in` asks whether one word
        # qualifies): the parts' answers are kept with each passage.
        found = vocab.near[word] = (any(_near(word, part) for part in vocab.parts) if vocab.parts
                                    else _near_in(word, vocab.by_initial(word[0])))
    return found


def _near_in(word: str, vocab: Iterable[str]) -> bool:
    """Whether a word of `vocab` is within edit distance `limit` of `word` (`_within`), or a prefix of it (of
    five letters or more). Both need an alphabetic word with `word`'s first letter (a prefix starts with it
    too): what `Vocabulary.by_initial` keeps, so searching all of `vocab` or that letter's words gives one
    answer."""
    limit = 1 if len(word) < 7 else 2
    for other in vocab:
        if other[:1] == word[:1] and abs(len(other) - len(word)) <= limit and other.isalpha():
            if _within(word, other, limit):
                return True
        elif len(other) >= 5 and word.startswith(other) and other.isalpha():
            return True
    return False


def _within(a: str, b: str, limit: int) -> bool:
    """Whether the Levenshtein distance of `a` and `b` is at most `limit`. Equal leading characters never need
    an edit (the distance is that of what follows them), and at the first difference a substitution, a
    deletion or an insertion comes first: at most 3 ** limit comparisons of slices, instead of a table of
    len(a) × len(b) cells filled in Python."""
    if abs(len(a) - len(b)) > limit:
        return False
    shorter = min(len(a), len(b))
    i = 0
    while i < shorter and a[i] == b[i]:
        i += 1
    if i == shorter:  # what is left is one word's tail: that many insertions, at most `limit` (checked above)
        return True
    if limit == 0:
        return False
    return (_within(a[i + 1:], b[i + 1:], limit - 1) or _within(a[i + 1:], b[i:], limit - 1)
            or _within(a[i:], b[i + 1:], limit - 1))


def _abbreviates(short: str, vocab: AbstractSet[str]) -> bool:
    return 3 <= len(short) <= 4 and any(v.startswith(short) and v.isalpha() for v in vocab)


def missing_names(question: str, evidence: Sequence[Evidence | Passage]) -> list[str]:
    """Focus names of the question that no evidence passage (title or text, any grade) mentions."""
    names = focus_names(question)
    if not names:
        return []
    vocab, sequence = _vocabulary((e.title, e.text) for e in evidence)
    texts: list[str] = []

    def found(part: str) -> bool:
        if not mentioned(part, vocab, sequence):
            return False
        if not _derived(part):
            return True
        if not texts:
            texts.extend(fold(f"{e.title}. {e.text}") for e in evidence)
        return any(re.search(rf"\b{re.escape(fold(part))}", text) for text in texts)

    missing = [n for n in names
               if not all(found(p) for p in _parts(n) if _specific(p, question) or len(_parts(n)) == 1)]
    if not missing:
        return []
    # A place found through what contains it ("San Diego" where a passage writes "California").
    bodies = [f"{e.title}. {e.text}" for e in evidence]
    return [n for n in missing if not within_mentioned(n, bodies)]


# Names asked about by plan, product or tier ("the Starter plan", "a Runner license"): a single word the
# stemmer cuts by more than a plural ("starter" → "start") is mentioned only by its own word ("starter",
# "starters"), not by another word of that stem ("the failover starts").
def _derived(name: str) -> bool:
    """A single alphabetic word whose stem drops a suffix other than a plural's ("Starter", "Planner")."""
    word = fold(name).strip()
    if not word.isalpha() or word.endswith("s"):
        return False
    return len(word) - len(stem(word)) >= 2


def mentioning(name: str, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence passages that mention `name` (title or text), in the order given."""
    return [e for e in evidence if _text_mentions(name, e.title, e.text)]


@memoised(TEXT_CACHE_SIZE)  # a passage is asked about the same names in every hop
def _text_mentions(name: str, title: str, text: str) -> bool:
    vocab, sequence = text_vocabulary(title, text)
    return mentioned(name, vocab, sequence)


def missing_terms(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The asked-about words (`asked_terms`) that no evidence passage mentions, in the question's order; for a
    "can I …" question (or "what is Acme's …"), its object's words when most of them are missing; for "does
    Wagely <do> …", when more than half are."""
    terms = asked_terms(question)
    ability = asked_terms(question, (ASKED_ABILITY, *ASKED_ABILITY_TURNED, ASKED_ATTRIBUTE, *ASKED_HELD))
    acted = asked_terms(question, (ASKED_PROVIDER_DOES,))
    if not (terms or ability or acted) or not evidence:
        return []
    texts = [f"{e.title}. {e.text}" for e in evidence]
    shared, sequence = _vocabulary((e.title, e.text) for e in evidence)
    # The parts of hyphenated words count too ("money-back" mentions "money").
    extra = {_norm(p) for e in evidence for w in passage_words(e.title, e.text) if "-" in w
             for p in w.split("-") if p}
    # The everyday words of a technical acronym a passage uses ("text message" for "SMS", `EVERYDAY`).
    folded = fold(question)
    extra.update(w for phrase, acronym in EVERYDAY.items() if phrase in folded
                 and (_norm(acronym) in shared or _norm(acronym) in extra) for w in phrase.split())
    vocab = Vocabulary(shared | extra, words=shared.words | extra)
    missing = [t for t in terms if not mentioned(t, vocab, sequence)]
    if missing:
        return missing
    # The product or company most passages name says nothing about what is asked of it.
    def common(term: str) -> bool:
        return len(texts) >= 4 and 2 * sum(term in fold(text) for text in texts) > len(texts)

    ability = [t for t in ability if not common(t)]
    unable = [t for t in ability if not mentioned(t, vocab, sequence)]
    if unable and 2 * len(unable) >= len(ability):
        return unable
    acted = [t for t in acted if not common(t)]
    unable = [t for t in acted if not mentioned(t, vocab, sequence)]
    return unable if 2 * len(unable) > len(acted) else []
