"""CRAG-style grading of passages by lexical + embedding agreement with the ORIGINAL question.

Entities that earlier hops resolved from correct evidence (the bridge terms of the sub-query that found
a passage) count as part of the question: "Hank Snow" is what "Hello Love's performer" means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from heuristic.partial import known_question
from investigation.citations import evidence_id
from investigation.memo import memoised
from investigation.state import Evidence, Grade, Passage
from investigation.text import (
    TEXT_CACHE_SIZE,
    ask_sentence,
    body_stems,
    content_stems,
    entities,
    fold,
    stem,
    words,
)

Vectoriser = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class GraderConfig:
    """Weights and band thresholds (calibrated on the development sets)."""

    lexical_weight: float = 0.45
    embedding_weight: float = 0.55
    title_bonus: float = 0.12
    bridge_weight: float = 0.8  # how much a bridged passage's agreement with its sub-query counts
    correct: float = 0.52
    ambiguous: float = 0.42


# A technical identifier written in lower case with dots ("payrun.paid"): an event or a field name, as
# telling as a capitalised name. A web domain ("shop.io", "example.com") ends in a short top-level part.
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(?:\.[a-z0-9]+)*\.[a-z]{4,}$")


def weighted_terms(text: str) -> dict[str, float]:
    """Content stems of `text`, names, numbers and identifiers (`_IDENTIFIER`) weighted twice as much as
    other words."""
    weights = {s: 1.0 for s in content_stems(text)}
    for name in entities(text):
        for word in words(name):
            key = stem(word)
            if key in weights:
                weights[key] = 2.0
    for key in list(weights):
        if key.isdigit() or _IDENTIFIER.match(key):
            weights[key] = 2.0
    return weights


# "How quickly / long / often …?" asks for a value: the passage that gives it says "within 10 business days",
# not the measure word; a lower-case "us" is the asker, not the United States. Neither is graded against.
# "On what date / which day …?" asks for a date, which release notes and policies write without the word.
_ASKING_WORDS = re.compile(r"\bhow\s+(quickly|fast|soon|long|often|early|late)\b|(?-i:\b(us)\b)"
                           r"|\b(?:what|which)\s+(?:(?:exact|calendar)\s+)?(date|day|month)\b",
                           re.IGNORECASE)
# "How long do <things> stay / remain <state>?", "How long does <it> last?": the state only says that a
# lifetime is asked ("stay usable", "remain active"); the passage that answers gives the thing's duration in
# its own words ("valid for 7 days", "expires after 30 minutes").
_LIFETIME = re.compile(r"\bhow\s+long\s+(?:do|does|will|would|can|could|is|are)\s+(?:[\w'-]+\s+){1,4}?"
                       r"(?P<state>(?:stay|stays|remain|remains|last|lasts)(?:\s+[\w-]+)?)\s*\?",
                       re.IGNORECASE)
# The asker's people in general ("Can our team use …?", "Can people return …?"): the passage that answers
# names them in its own words ("every user", "your customers") or not at all. Lower case ("Team" is a plan).
_PEOPLE_WORDS = re.compile(r"(?-i:\b(team|people|staff|folks|colleagues|personnel|everyone|anyone)\b)")
# How a ticket tells its story ("I need to …", "she says it stopped working", "a while ago", "can I still …"):
# words of conversation, not of the matter asked about; the passage that answers seldom has them. Lower case
# ("Need" may be a plan's name).
_TELLING_WORDS = re.compile(
    r"(?-i:\b(need|needs|needed|want|wants|wanted|happen|happens|happened|still|ago|got|gotten|says|said|"
    r"tells|told|come|comes|came|really|actually|please|wonder|wondering|anymore|already|"
    r"lately|recently|someone|somebody)\b)"
)


# How often something happens ("fails every time", "each time I try") says nothing about what it is about:
# the passage that explains the failure does not say how often the asker met it.
_FREQUENCY = re.compile(
    r"\b(?:every|each|all\s+the)\s+times?\b|\b(?:again\s+and\s+again|over\s+and\s+over)\b", re.IGNORECASE
)
# Generic support vocabulary a reworded question and its passage name in different words (where data is
# "stored" / "hosted", the "smallest" / "minimum" amount, one's "money back" / a "refund", told "in advance" /
# given "notice", events "lost" / "dropped", "look at" / "view" a page). Not any knowledge base's own terms: a
# word of one group agrees with a passage that writes another of its group.
_SAME_WORDS = (
    ("store", "stored", "stores", "host", "hosted", "hosts", "reside", "resides"),
    ("smallest", "lowest", "minimum", "min"),
    ("largest", "biggest", "highest", "maximum", "max"),
    ("refund", "refunds", "refunded", "reimburse", "reimbursed", "reimbursement"),
    ("planned", "scheduled"),
    ("lose", "lost", "gone", "drop", "dropped", "discard", "discarded"),
    ("apply", "applies", "applied", "effect", "effective"),
)
_SAME: dict[str, frozenset[str]] = {stem(w): frozenset(stem(o) for o in group)
                                    for group in _SAME_WORDS for w in group}
# Phrases of the same vocabulary that a single word of a group stands for. Switching or turning something
# (back) on or off, with its object between, is enabling or disabling it ("switch the webhook back on" for
# "re-enable a disabled endpoint"): the verb and "back" stand for the word, the object stays.
_SAME_PHRASES = ((re.compile(r"\bmoney\s+back\b", re.IGNORECASE), "refund"),
                 (re.compile(r"\blook(?:s|ed|ing)?\s+at\b", re.IGNORECASE), "view"),
                 (re.compile(r"\bin\s+advance\b", re.IGNORECASE), "notice"),
                 (re.compile(r"\b(?:switch|turn)(?:s|ed|ing)?\b(?=(?:\s+[\w'-]+){0,3}?\s+(?:back\s+)?on\b)",
                             re.IGNORECASE), "enable"),
                 (re.compile(r"\bback(?=\s+on\b)", re.IGNORECASE), "enable"),
                 (re.compile(r"\b(?:switch|turn)(?:s|ed|ing)?\b(?=(?:\s+[\w'-]+){0,3}?\s+off\b)",
                             re.IGNORECASE), "disable"))


def _said_otherwise(term: str, present: AbstractSet[str]) -> bool:
    """Is `term` said by a word of its group (`_SAME`) or by its negation with "un-" ("pay items without a
    mapping" for "unmapped items")?"""
    return f"un{term}" in present or not _SAME.get(term, frozenset()).isdisjoint(present)


def telling_stems(question: str) -> frozenset[str]:
    """The stems of the words a ticket tells its story with (`_TELLING_WORDS`)."""
    return frozenset(stem(m.group(1)) for m in _TELLING_WORDS.finditer(question))


def _graded_agreement(terms: dict[str, float], title: str, text: str,
                      told: AbstractSet[str] = frozenset()) -> float:
    """`body_agreement`, a question's word also found when said otherwise (`_said_otherwise`). A word the
    ticket tells its story with (`told`) counts where the passage has it and is not missed where it lacks it:
    "Which plan do I need …?" agrees with "… needs the Scale plan", and "I still need to reprint a label"
    is not held against the passage on reprinting labels."""
    present = body_stems(title, text)
    found = {t for t in terms if t in present or _said_otherwise(t, present)}
    return _agreement({t: w for t, w in terms.items() if t not in told or t in found}, found)


# A verb and its particle, written apart in one text and closed up in another ("log in" / "login", "sign up" /
# "signup", "set up" / "setup", "check out" / "checkout").
_PHRASAL = re.compile(r"\b([a-z]{2,})[\s-]+(in|up|out|on|off|back|over|down)\b", re.IGNORECASE)


@memoised(TEXT_CACHE_SIZE)  # the question and every candidate sentence, in every synthesis
def phrasal_compounds(text: str) -> tuple[tuple[str, str], ...]:
    """The closed-up stem of each verb-and-particle pair of `text`, with the verb's stem:
    (("login", "log"),) for "… log in …"."""
    return tuple((stem(m.group(1) + m.group(2)), stem(m.group(1))) for m in _PHRASAL.finditer(text))


def standing_for(question: str, asked: AbstractSet[str], present: AbstractSet[str],
                 text: str = "") -> set[str]:
    """The asked stems that a present stem of their generic-vocabulary group stands for (`_SAME`): "minimum"
    in a sentence says the "smallest" a question asks, "refund" its "money back" (`_SAME_PHRASES`), and
    "unmapped" the "mapping" of "items without a mapping". Serves reworded questions; also a phrasal verb
    said closed up ("login" in a sentence for a question's "log in", and "log in" in `text`, the sentence,
    for a question's "login")."""
    out = {t for t in asked if t not in present and _said_otherwise(t, present)}
    out.update(verb for joined, verb in phrasal_compounds(question) if joined in present and verb in asked)
    out.update(joined for joined, _verb in phrasal_compounds(text) if joined in asked)
    for pattern, word in _SAME_PHRASES:
        if stem(word) in present or not _SAME.get(stem(word), frozenset()).isdisjoint(present):
            out.update(t for m in pattern.finditer(question) for t in content_stems(m.group(0)))
    return out


# A version said in words ("version 2 of the API", "version 5.4") as release notes and error tables write it:
# "v2", "5.4".
_VERSION_WORDS = re.compile(r"\b(?:version|v\.)\s*(\d+(?:\.\d+)*)\b", re.IGNORECASE)


def _version(match: re.Match[str]) -> str:
    number = match.group(1)
    return number if "." in number else f"v{number}"


def _graded_question(question: str) -> str:
    """The question as graded: how often something happens dropped (`_FREQUENCY`), a phrase of the generic
    support vocabulary as its group's word (`_SAME_PHRASES`), a version as release notes write it
    (`_VERSION_WORDS`)."""
    text = _VERSION_WORDS.sub(_version, _FREQUENCY.sub(" ", question))
    for pattern, word in _SAME_PHRASES:
        text = pattern.sub(word, text)
    return text


def asking_stems(question: str) -> set[str]:
    """The stems of the words that only say how a question asks (`_ASKING_WORDS`, `_LIFETIME`'s state)."""
    asking = {stem(next(g for g in m.groups() if g)) for m in _ASKING_WORDS.finditer(question)}
    asking.update(stem(w) for m in _LIFETIME.finditer(question) for w in words(m.group("state")))
    return asking


def graded_terms(question: str) -> dict[str, float]:
    """`weighted_terms` of a question without the words that only say how it asks (`asking_stems`) or whom
    it is about in general (`_PEOPLE_WORDS`)."""
    terms = weighted_terms(question)
    asking = asking_stems(question) | {stem(m.group(1)) for m in _PEOPLE_WORDS.finditer(question)}
    kept = {t: w for t, w in terms.items() if t not in asking}
    return kept or terms


def lexical_agreement(terms: dict[str, float], text: str) -> float:
    """Weighted share of `terms` that occur in `text`."""
    return _agreement(terms, content_stems(text))


def body_agreement(terms: dict[str, float], title: str, text: str) -> float:
    """`lexical_agreement(terms, f"{title} {text}")`: a passage with its title."""
    return _agreement(terms, body_stems(title, text))


def _agreement(terms: dict[str, float], present: AbstractSet[str]) -> float:
    total = sum(terms.values())
    if total == 0:
        return 0.0
    return sum(w for t, w in terms.items() if t in present) / total


def bridge_terms(question: str, subquery: str) -> dict[str, float]:
    """Terms of a sub-query that are not in the question: what an earlier hop resolved."""
    question_stems = content_stems(question)
    return {t: w for t, w in weighted_terms(subquery).items() if t not in question_stems}


def title_mentioned(title: str, text: str) -> bool:
    """True when the passage title (its content words, without a disambiguation such as "(musician)")
    appears in `text` (the question)."""
    bare = re.sub(r"\s*\([^)]*\)\s*$", "", title) or title
    title_stems = content_stems(bare)
    return bool(title_stems) and title_stems <= content_stems(text) or fold(bare) in fold(text)


def score_passages(question: str, passages: Sequence[Passage], query_of: dict[str, str],
                   vectorise: Vectoriser, config: GraderConfig = GraderConfig()) -> list[float]:
    """Agreement score in [0, ~1.1] of each passage with the question (and its resolved bridge terms)."""
    if not passages:
        return []
    terms = graded_terms(_graded_question(question))
    told = telling_stems(question)
    # A ticket that describes a situation and then asks is also graded against its question sentence alone;
    # a value asked "on the Starter plan" that no passage knows, against the question without it.
    ask = ask_sentence(question)
    known = known_question(ask, passages)
    asks = list(dict.fromkeys(a for a in (ask, known) if a is not None and a != question))
    subqueries = sorted({query_of.get(p.chunk_id, question) for p in passages})
    vectors = vectorise([question, *asks, *subqueries, *(f"{p.title}. {p.text}" for p in passages)])
    q_vec = vectors[0]
    offset = 1 + len(asks)
    sub_vec = {q: vectors[offset + i] for i, q in enumerate(subqueries)}
    p_vecs = vectors[offset + len(subqueries):]
    ask_terms = [(graded_terms(_graded_question(a)), vectors[1 + i]) for i, a in enumerate(asks)]
    scores: list[float] = []
    for passage, p_vec in zip(passages, p_vecs, strict=True):
        cosine = float(np.dot(q_vec, p_vec))
        score = (
            config.lexical_weight * _graded_agreement(terms, passage.title, passage.text, told)
            + config.embedding_weight * cosine
        )
        if title_mentioned(passage.title, question):
            score += config.title_bonus
        for a_terms, a_vec in ask_terms:
            lexical = _graded_agreement(a_terms, passage.title, passage.text, told)
            cosine_ask = float(np.dot(a_vec, p_vec))
            score = max(score, config.lexical_weight * lexical + config.embedding_weight * cosine_ask)
        subquery = query_of.get(passage.chunk_id, question)
        bridge = bridge_terms(question, subquery)
        if bridge:
            sub_terms = {**terms, **bridge}
            sub_score = (config.lexical_weight * body_agreement(sub_terms, passage.title, passage.text)
                         + config.embedding_weight * float(np.dot(sub_vec[subquery], p_vec)))
            if lexical_agreement(bridge, passage.title) >= 0.5:
                sub_score += config.title_bonus
            score = max(score, config.bridge_weight * sub_score)
        scores.append(score)
    return scores


def band(score: float, config: GraderConfig = GraderConfig()) -> Grade:
    """The CRAG band of an agreement score."""
    if score >= config.correct:
        return Grade.CORRECT
    if score >= config.ambiguous:
        return Grade.AMBIGUOUS
    return Grade.INCORRECT


def grade_passages(question: str, passages: Sequence[Passage], hop: int, query_of: dict[str, str],
                   vectorise: Vectoriser, config: GraderConfig = GraderConfig()) -> list[Evidence]:
    """Evidence for every passage, in the fused order given (the fused rank is kept, not re-sorted)."""
    scores = score_passages(question, passages, query_of, vectorise, config)
    return [
        Evidence(
            id=evidence_id(p.chunk_id), chunk_id=p.chunk_id, source_id=p.source_id, title=p.title,
            text=p.text, score=round(s, 6), grade=band(s, config), hop=hop,
            query=query_of.get(p.chunk_id, question), url=p.url, visibility=p.visibility,
        )
        for p, s in zip(passages, scores, strict=True)
    ]


def resolves_bridge(question: str, evidence: Evidence) -> bool:
    """True when a passage is titled by the entity its bridging sub-query asked for (the chain advanced)."""
    bridge = bridge_terms(question, evidence.query)
    return bool(bridge) and lexical_agreement(bridge, evidence.title) >= 0.5
