"""Planning without an LLM: decomposition of comparisons/conjunctions, and bridging next-hop queries.

Bridging is IRCoT / Self-Ask done lexically: a salient entity found in graded evidence but absent from
the question is combined with the part of the question that evidence left unresolved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from investigation.router import compared_entities, split_independent
from investigation.state import Evidence, Grade, Plan, Route, RouteDecision, SubQuery
from investigation.text import (
    QUESTION_WORDS,
    STOPWORDS,
    content_stems,
    content_words,
    entities,
    fold,
    split_sentences,
    stem,
    words,
)

# Capitalised words that are rarely what a question hinges on.
_GENERIC_NAMES: frozenset[str] = frozenset(
    """
    american british english french german italian spanish russian chinese japanese korean indian canadian
    australian irish scottish welsh dutch swedish norwegian danish finnish polish greek turkish mexican
    brazilian european african asian latin christian catholic jewish muslim western eastern northern southern
    january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday he she it they his her its their this that these those there
    i we you according however although also after before during while since when then later
    """.split()
)
_COMPARISON_WORDS = frozenset(
    "both either neither same common older younger oldest youngest earlier later first larger largest "
    "smaller bigger longer shorter taller higher lower more less fewer newer better respective respectively "
    "also too".split()
)


@dataclass(frozen=True)
class PlannerConfig:
    """Limits of planning and bridging."""

    max_new_queries: int = 2
    max_sources: int = 4
    max_sentences: int = 6
    max_unresolved_words: int = 6


def normalise_query(text: str) -> str:
    """The comparison key of a query: folded content words, in order."""
    return " ".join(content_words(text))


def property_words(question: str, names: Sequence[str]) -> list[str]:
    """What a comparison asks about: the question's content words outside the compared names."""
    name_stems = {stem(w) for name in names for w in words(name)}
    return [w for w in content_words(question) if stem(w) not in name_stems and w not in _COMPARISON_WORDS]


def plan_question(question: str, route: RouteDecision) -> Plan:
    """The original question first, then one sub-query per compared entity / independent part."""
    original = SubQuery(text=question, purpose="original question")
    if route.route is Route.MULTI_PART:
        names = compared_entities(question)
        if len(names) >= 2:
            prop = " ".join(property_words(question, names))
            subs = tuple(SubQuery(text=f"{name} {prop}".strip(), purpose=f"entity: {name}") for name in names)
            return Plan(original=question, subqueries=(original, *subs), kind="decomposed")
        parts = split_independent(question)
        if len(parts) >= 2:
            subs = tuple(SubQuery(text=part, purpose=f"part {i}") for i, part in enumerate(parts, start=1))
            return Plan(original=question, subqueries=(original, *subs), kind="decomposed")
    return Plan(original=question, subqueries=(original,), kind="as_is")


def _specificity(name: str) -> float:
    tokens = words(name)
    if not tokens:
        return 0.0
    if len(tokens) == 1:
        token = tokens[0]
        if token in _GENERIC_NAMES or token in STOPWORDS or token in QUESTION_WORDS:
            return 0.0
        return 0.7 if not token.isdigit() else 0.3
    return 1.0


def bridge_candidates(question: str, evidence: Sequence[Evidence],
                      config: PlannerConfig = PlannerConfig()) -> list[tuple[str, float, Evidence]]:
    """Entities in graded evidence absent from the question, best first: (name, salience, source)."""
    question_folded = fold(question)
    question_stems = content_stems(question)
    usable = [e for e in evidence if e.grade is not Grade.INCORRECT] or list(evidence[:2])
    sources = sorted(usable, key=lambda e: (-e.hop, -e.score, e.id))[: config.max_sources]
    scored: dict[str, tuple[str, float, Evidence]] = {}
    for position, source in enumerate(sources):
        source_weight = (1.0 if source.grade is Grade.CORRECT else 0.6) / (1.0 + 0.5 * position)
        found_in: list[tuple[str, float]] = []
        if not content_stems(source.title) <= question_stems:
            found_in.append((source.title, 0.9))
        for index, sentence in enumerate(split_sentences(source.text)[: config.max_sentences]):
            relevance = len(question_stems & content_stems(sentence)) / max(1, len(question_stems))
            sentence_weight = (0.4 + relevance) * (1.0 if index == 0 else 0.8)
            found_in.extend((name, sentence_weight) for name in entities(sentence))
        for name, weight in found_in:
            key = fold(name)
            name_stems = content_stems(name)
            if not name_stems or key in question_folded or name_stems <= question_stems:
                continue
            salience = source_weight * weight * _specificity(name)
            if salience <= 0:
                continue
            previous = scored.get(key)
            total = salience + (previous[1] if previous else 0.0)
            scored[key] = (previous[0] if previous else name, total, previous[2] if previous else source)
    return sorted(scored.values(), key=lambda item: (-item[1], fold(item[0])))


def unresolved_words(question: str, resolved_text: str, config: PlannerConfig = PlannerConfig()) -> list[str]:
    """Question content words the resolving evidence does not contain (what is still to be found)."""
    resolved = content_stems(resolved_text)
    out: list[str] = []
    for word in content_words(question):
        if stem(word) not in resolved and word not in out:
            out.append(word)
    return out[: config.max_unresolved_words]


def bridge_queries(question: str, evidence: Sequence[Evidence], asked: Sequence[str],
                   config: PlannerConfig = PlannerConfig()) -> list[SubQuery]:
    """At most `max_new_queries` bridging queries, none equal (normalised) to one already asked."""
    asked_keys = {normalise_query(q) for q in asked}
    asked_folded = " | ".join(fold(q) for q in asked)
    out: list[SubQuery] = []
    for name, _salience, source in bridge_candidates(question, evidence, config):
        if fold(name) in asked_folded:
            continue  # this entity was already bridged to
        rest = unresolved_words(question, f"{source.title} {source.text}", config)
        text = " ".join([name, *rest]).strip()
        key = normalise_query(text)
        if not key or key in asked_keys:
            continue
        asked_keys.add(key)
        out.append(SubQuery(text=text, purpose=f"bridge: {name} (from {source.id})"))
        if len(out) >= config.max_new_queries:
            break
    return out
