"""Names in evidence, without an LLM: which capitalised phrases a passage mentions and how salient they are
for a question, which passages are titled by a name the question or another passage holds (the anchors and
links the planner's bridging walks), and the planner's limits (`PlannerConfig`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.names import base_title, clean_name, is_name_like, specificity
from heuristic.places import asked_place, in_asked_role, promote_places
from investigation.memo import memoised
from investigation.state import Evidence, Grade
from investigation.text import (
    TEXT_CACHE_SIZE,
    content_stems,
    entities,
    fold,
    padded_words,
    quoted_titles,
    split_sentences,
    stem,
    words,
)

__all__ = [
    "PlannerConfig",
    "base_title",
    "clean_name",
    "find_anchors",
    "introduced_terms",
    "is_name_like",
    "linked_titles",
    "linked_titles_to",
    "mentions",
]


@dataclass(frozen=True)
class PlannerConfig:
    """Limits of planning and bridging."""

    max_new_queries: int = 2
    second_query_ratio: float = 0.6
    max_sources: int = 4
    max_sentences: int = 6
    max_unresolved_words: int = 6


def _proximity(sentence_words: Sequence[str], name: str, asked: Sequence[tuple[int, str]]) -> float:
    """1 when a question word sits right next to the name in the sentence, decaying with distance. `asked`:
    the sentence's words whose stem is a question stem, with their positions (the same for every name)."""
    name_words = words(name)
    if not name_words:
        return 0.0
    first = name_words[0]
    positions = [i for i, w in enumerate(sentence_words) if w == first]
    anchors = [i for i, w in asked if w not in name_words]
    if not positions or not anchors:
        return 0.0
    distance = min(abs(p - a) for p in positions for a in anchors)
    return 1.0 / (1.0 + distance / 3.0)


_ALIAS_END = re.compile(r"\b(is|was|are|were|has|had)\b|\(")
_TERM = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")
_STATE = re.compile(
    r"\b(?:is|are|was|were|becomes?|became|gets?|got|stays?|remains?|turns?|goes|went)\s+"
    r"(?:now\s+|then\s+|automatically\s+|immediately\s+)?(?!not\b)([a-z]+(?:ed|en)|[a-z]+-[a-z]+)\b"
)
_NOT_STATES = frozenset(
    [
        "used",
        "based",
        "needed",
        "required",
        "called",
        "named",
        "listed",
        "shown",
        "described",
        "included",
        "sent",
        "given",
        "made",
        "done",
        "seen",
        "taken",
        "known",
        "charged",
        "billed",
    ]
)


def _listed_beside_the_question(name: str, sentence: str, question_stems: set[str]) -> bool:
    """True when `name` is one item of a parenthesised list that also holds a word of the question: a
    sibling of what the question states, not what follows from it."""
    for group in re.findall(r"\(([^()]*)\)", sentence):
        if fold(name) in fold(group) and "," in group:
            others = [item for item in group.split(",") if fold(name) not in fold(item)]
            if any(content_stems(item) & question_stems for item in others):
                return True
    return False


def introduced_terms(sentence: str, question: str) -> list[str]:
    """Lower-case terms a sentence introduces that the question does not use: compounds ("read-only",
    "card_declined", "auto-reload") and the state something enters ("the organization is suspended"). In a
    support article these are what a name would be in an encyclopedia: the thing the next hop must follow."""
    asked = content_stems(question)
    found = [*_TERM.findall(sentence), *(m.group(1) for m in _STATE.finditer(sentence))]
    return [t for t in dict.fromkeys(found) if not any(c.isdigit() for c in t) and t not in _NOT_STATES
            and not content_stems(t) <= asked]


def mentions(
    source: Evidence, question: str, config: PlannerConfig = PlannerConfig()
) -> list[tuple[str, float]]:
    """Names mentioned by a passage, with a salience for the question, best first.

    Names in the passage's opening alias ("Andrew Alan "Drew" Fuller (born …) is …") are the subject
    itself, not a bridge, and are skipped; quoted titles get a bonus. A function of the passage's text and
    the question alone: selection and bridging ask it of the same passages in every hop, so it is read once.
    """
    return list(_mentions(source.text, question, config))


@memoised(TEXT_CACHE_SIZE // 4)
def _mentions(text: str, question: str, config: PlannerConfig) -> tuple[tuple[str, float], ...]:
    question_stems = content_stems(question)
    question_folded = fold(question)
    named = any(is_name_like(n) for n in entities(question))
    titles = {fold(t) for t in quoted_titles(text)}
    place = asked_place(question) if named else ""
    found: dict[str, tuple[str, float]] = {}
    in_role: set[str] = set()
    for index, sentence in enumerate(split_sentences(text)[: config.max_sentences]):
        searchable = sentence
        if index == 0:
            cut = _ALIAS_END.search(sentence)
            searchable = sentence[cut.start():] if cut else sentence
        sentence_words = words(sentence)
        stems = [stem(w) for w in sentence_words]
        relevance = len(question_stems.intersection(stems)) / max(1, len(question_stems))
        asked = [(i, w) for i, (w, s) in enumerate(zip(sentence_words, stems)) if s in question_stems]
        position_weight = 1.0 if index == 0 else 0.85
        names = [clean_name(n, sentence, text) for n in entities(searchable)]
        terms = introduced_terms(sentence, question) if relevance > 0 else []
        for name in [*dict.fromkeys(names), *terms]:
            key = fold(name)
            if key in question_folded or not is_name_like(name) or content_stems(name) <= question_stems:
                continue
            weight = (0.3 + relevance + 0.6 * _proximity(sentence_words, name, asked))
            weight *= position_weight * specificity(name) * (1.25 if key in titles else 1.0)
            if sentence.startswith(name) and len(words(name)) == 1:
                weight *= 0.6  # a capitalised sentence opener is often just a word
            if name in terms:
                # A question about named things bridges through names (measured on HotpotQA/MuSiQue); one
                # without names (a support ticket) through the terms and states its articles introduce.
                weight *= 0.5 if named else 2.0
            elif not named:
                weight *= 0.6  # capitalised words in a support article are mostly headings and UI labels
            if place and in_asked_role(name, sentence, place):
                in_role.add(key)  # "the state where X is": the region X's passage writes after X's town
            if not named and _listed_beside_the_question(name, sentence, question_stems):
                weight *= 0.3  # "(card declined, 3-D Secure not confirmed)": an alternative to what is asked
            if weight > 0 and (key not in found or found[key][1] < weight):
                found[key] = (name, weight)
    found = promote_places(found, in_role)
    return tuple(sorted(found.values(), key=lambda item: (-item[1], fold(item[0]))))


def linked_titles(source: Evidence, evidence: Sequence[Evidence]) -> list[Evidence]:
    """Evidence whose title is mentioned in `source`'s text (a hyperlink, as far as text can tell)."""
    body = fold(source.text)
    out = []
    for e in evidence:
        title = base_title(e.title)
        if e.chunk_id != source.chunk_id and len(title) >= 4 and title != base_title(source.title) \
                and title in body and is_name_like(e.title):
            out.append(e)
    return out


def linked_titles_to(target: Evidence, evidence: Sequence[Evidence]) -> list[Evidence]:
    """Evidence whose text mentions `target`'s title (links pointing at it)."""
    title = base_title(target.title)
    if len(title) < 5 or not is_name_like(target.title):
        return []
    return [e for e in evidence if e.chunk_id != target.chunk_id and base_title(e.title) != title
            and title in fold(e.text)]


def _phrase_position(phrase: str, text: str) -> int:
    """Word-boundary position of `phrase` in `text` (both folded word sequences), or -1."""
    key = padded_words(phrase)
    return padded_words(text).rfind(key) if key.strip() else -1


_ACRONYM = re.compile(r"[A-Z]{2,4}s?")
_CODE_NAME = re.compile(r"\b[A-Za-z]+_\d+\b|\b[A-Z]{2,}-?\d{3,}\b")  # ERR_4030, PCL-1001, HTTP402


def find_anchors(question: str, evidence: Sequence[Evidence]) -> list[tuple[Evidence, float]]:
    """Passages the chain starts from, with a weight: titled by a name of the question (whatever their
    grade), the innermost name (the last one in the question) first; else the best graded passages."""
    length = max(1, len(" ".join(words(question))))
    # A short acronym ("API", "SSO") names a topic many titles share, not the thing the question is about.
    names = [n for n in entities(question) if is_name_like(n) and not _ACRONYM.fullmatch(n.strip())]
    codes = [fold(c) for c in _CODE_NAME.findall(question)]
    found: list[tuple[Evidence, float]] = []
    for e in evidence:
        title = base_title(e.title)
        position = _phrase_position(title, question) if len(title) >= 3 else -1
        if position < 0:
            hits = [_phrase_position(n, question) for n in names if _phrase_position(n, e.title) >= 0]
            # A support article rarely has a code in its title: the passage that explains the question's code
            # ("ERR_4030 — Organization suspended: …") is where the chain starts.
            hits += [_phrase_position(c, question) for c in codes if _phrase_position(c, e.text) >= 0]
            position = max(hits, default=-1)
        if position < 0:
            continue
        weight = (0.8 + 0.2 * position / length) * (1.0 if e.grade is not Grade.INCORRECT else 0.85)
        found.append((e, weight))
    if not found:
        usable = sorted(
            (e for e in evidence if e.grade is not Grade.INCORRECT), key=lambda e: (-e.score, e.chunk_id)
        )
        fallback = usable[:2] or sorted(evidence, key=lambda e: (-e.score, e.chunk_id))[:1]
        found = [(e, 0.7) for e in fallback]
    return sorted(found, key=lambda item: (-item[1] - 0.2 * item[0].score, item[0].chunk_id))
