"""Planning without an LLM: decomposition of comparisons/conjunctions, and bridging next-hop queries.

Bridging is IRCoT / Self-Ask done lexically: a salient entity found in graded evidence but absent from
the question is combined with the part of the question that evidence left unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.chains import is_name
from heuristic.mentions import PlannerConfig, base_title, find_anchors, linked_titles, mentions
from heuristic.router import compared_entities, split_independent
from investigation.state import Evidence, Plan, PlanKind, QueryKind, Route, RouteDecision, SubQuery
from investigation.text import (
    ask_sentence,
    body_stems,
    content_stems,
    content_words,
    fold,
    query_key,
    split_sentences,
    stem,
    words,
)

_COMPARISON_WORDS = frozenset(
    [
        "both",
        "either",
        "neither",
        "same",
        "common",
        "older",
        "younger",
        "oldest",
        "youngest",
        "earlier",
        "later",
        "first",
        "larger",
        "largest",
        "smaller",
        "bigger",
        "longer",
        "shorter",
        "taller",
        "higher",
        "lower",
        "more",
        "less",
        "fewer",
        "newer",
        "better",
        "respective",
        "respectively",
        "also",
        "too",
    ]
)
# Words that say what a question asks, not what to look for: "how long", "what happens", "do we get".
_ASKING_WORDS = frozenset(
    [
        "long",
        "much",
        "many",
        "far",
        "often",
        "soon",
        "fast",
        "quickly",
        "happen",
        "happens",
        "happened",
        "get",
        "gets",
        "got",
        "give",
        "want",
        "need",
        "keep",
        "make",
        "take",
        "think",
        "use",
        "know",
        "tell",
        "mean",
        "means",
        "still",
    ]
)
# The planner's limits when none are given.
_DEFAULTS = PlannerConfig()
# A reached passage's mention whose sentence says none of what the question still asks weighs this much: it is
# what the reached entity relates to, not what the question asks of it.
_OFF_RELATION = 0.5


def property_words(question: str, names: Sequence[str]) -> list[str]:
    """What a comparison asks about: the question's content words outside the compared names."""
    name_stems = {stem(w) for name in names for w in words(name)}
    return [w for w in content_words(question) if stem(w) not in name_stems and w not in _COMPARISON_WORDS]


def plan_question(question: str, route: RouteDecision) -> Plan:
    """The original question first, then one sub-query per compared entity / independent part."""
    original = SubQuery(text=question, purpose="original question", kind=QueryKind.ORIGINAL)
    if route.route is Route.MULTI_PART:
        names = compared_entities(question)
        if len(names) >= 2:
            prop = " ".join(property_words(question, names))
            subs = tuple(SubQuery(text=f"{name} {prop}".strip(), purpose=f"entity: {name}",
                                  kind=QueryKind.PART) for name in names)
            return Plan(original=question, subqueries=(original, *subs), kind=PlanKind.DECOMPOSED)
        parts = split_independent(question)
        if len(parts) >= 2:
            subs = tuple(SubQuery(text=part, purpose=f"part {i}", kind=QueryKind.PART)
                         for i, part in enumerate(parts, start=1))
            return Plan(original=question, subqueries=(original, *subs), kind=PlanKind.DECOMPOSED)
    return Plan(original=question, subqueries=(original,), kind=PlanKind.AS_IS)


@dataclass
class _Node:
    evidence: Evidence
    weight: float
    depth: int
    covered: set[str]


def bridge_candidates(question: str, evidence: Sequence[Evidence],
                      config: PlannerConfig = _DEFAULTS) -> list[tuple[str, float, set[str]]]:
    """Names to bridge to, best first: (name, salience, question stems the path to it already covers).

    A walk over the evidence: it starts at anchor passages (titled by a name of the question), follows
    mentions to passages already retrieved under that name, and proposes the mentions no passage has.
    """
    question_stems = content_stems(question)
    by_title: dict[str, Evidence] = {}
    for e in sorted(evidence, key=lambda e: (-e.score, e.chunk_id)):
        by_title.setdefault(base_title(e.title), e)
    anchors = find_anchors(question, evidence)
    queue = [
        _Node(a, weight, 0, question_stems & body_stems(a.title, a.text))
        for a, weight in anchors[: config.max_sources]
    ]
    visited: set[str] = set()
    scored: dict[str, tuple[str, float, set[str]]] = {}
    while queue and len(visited) < 3 * config.max_sources:
        node = queue.pop(0)
        if node.evidence.chunk_id in visited:
            continue
        visited.add(node.evidence.chunk_id)
        node_mentions = mentions(node.evidence, question, config)
        linked = {base_title(e.title): e for e in linked_titles(node.evidence, evidence)}
        # A passage about a named thing reached by a link is what a description of the question resolved
        # to ("the actor who starred as Benton Fraser" → Paul Gross); what the question still asks is asked
        # of it. A support article reached by a link is a topic, not a thing the question describes.
        open_stems = question_stems - node.covered if node.depth and is_name(node.evidence.title) else set()
        sentences = [(fold(s), content_stems(s)) for s in split_sentences(node.evidence.text)] if open_stems \
            else []
        relation_named = False
        for rank, (name, salience) in enumerate(node_mentions[:8]):
            key = fold(name)
            if key == base_title(node.evidence.title):
                continue
            target = by_title.get(key) or next((e for t, e in linked.items() if key in t or t in key), None)
            if target is not None:
                if rank < 3 and target.chunk_id not in visited and node.depth < 2:
                    covered = node.covered | (question_stems & body_stems(target.title, target.text))
                    queue.append(_Node(target, node.weight * 0.9, node.depth + 1, covered))
                continue
            score = node.weight * salience * (1.0 + 0.25 * node.depth)
            if open_stems:
                if any(key in folded and stems & open_stems for folded, stems in sentences):
                    relation_named = True
                else:
                    score *= _OFF_RELATION
            previous = scored.get(key)
            if previous is None or previous[1] < score:
                scored[key] = (name, score + (previous[1] * 0.3 if previous else 0.0), node.covered)
        if open_stems and not relation_named:
            # No sentence of it names something in the asked relation ("have a child with"): the passage that
            # answers is one that names the reached entity itself (its child's, its team's), so bridge to it.
            name = _display_title(node.evidence.title)
            key = fold(name)
            if key and key not in scored:
                scored[key] = (name, node.weight, node.covered)
    return sorted(scored.values(), key=lambda item: (-item[1], fold(item[0])))


def _display_title(title: str) -> str:
    """A title as a name: without its disambiguation ("Always (2011 film)" → "Always")."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip() or title


def unresolved_words(question: str, covered: set[str], config: PlannerConfig = _DEFAULTS) -> list[str]:
    """Content words of the sentence that asks, not yet covered by the passages on the path: the relation
    still to be found ("born city"), without the words that only say how it is asked ("how long", "get"); when
    that sentence leaves fewer than two, the situation described before it ("a clinic … patient data")."""
    out: list[str] = []
    asking = ask_sentence(question)
    parts = [asking] if asking == question else [asking, question]
    for index, part in enumerate(parts):
        if index and len(out) >= 2:
            break  # the situation a ticket describes first only helps when the asking sentence is bare
        for word in content_words(part):
            if (stem(word) not in covered and word not in out and word not in _COMPARISON_WORDS
                    and word not in _ASKING_WORDS):
                out.append(word)
        if index == 0 and len(parts) > 1 and len(out) < 2:
            # A ticket's asking sentence says what the next hop must find even when the first passages use its
            # words too ("before our data gets deleted"): it beats the situation told before it.
            out = [w for w in dict.fromkeys(content_words(part)) if w not in _COMPARISON_WORDS
                   and w not in _ASKING_WORDS and "'" not in w] or out
    return out[: config.max_unresolved_words]


def bridge_queries(question: str, evidence: Sequence[Evidence], asked: Sequence[str],
                   config: PlannerConfig = _DEFAULTS) -> list[SubQuery]:
    """At most `max_new_queries` bridging queries, none equal (normalised) to one already asked."""
    asked_keys = {query_key(q) for q in asked}
    asked_folded = " | ".join(fold(q) for q in asked)
    out: list[SubQuery] = []
    best = 0.0
    for name, salience, covered in bridge_candidates(question, evidence, config):
        if fold(name) in asked_folded:
            continue  # this entity was already bridged to
        if out and salience < config.second_query_ratio * best:
            break  # one clear bridge: a second query would mostly cost
        best = max(best, salience)
        text = " ".join([name, *unresolved_words(question, covered, config)]).strip()
        key = query_key(text)
        if not key or key in asked_keys:
            continue
        asked_keys.add(key)
        out.append(SubQuery(text=text, purpose=f"bridge: {name}", kind=QueryKind.BRIDGE, follows=name))
        if len(out) >= config.max_new_queries:
            break
    return out


def part_queries(plan: Plan, missing: Sequence[str], asked: Sequence[str]) -> list[SubQuery]:
    """For a decomposed plan: the bare name of each compared entity no evidence was found for."""
    asked_keys = {query_key(q) for q in asked}
    out = []
    for item in missing:
        if item.startswith("entity: "):
            name = item.removeprefix("entity: ")
            if query_key(name) and query_key(name) not in asked_keys:
                asked_keys.add(query_key(name))
                out.append(SubQuery(text=name, purpose=f"entity: {name}", kind=QueryKind.PART))
    return out


def probe_queries(question: str, names: Sequence[str], asked: Sequence[str]) -> list[SubQuery]:
    """One query for the question's names that no evidence mentions yet (`Judgment.absent`), unless a
    query other than the question itself already asked for them."""
    others = " | ".join(fold(q) for q in asked if query_key(q) != query_key(question))
    fresh = [n for n in names if fold(n) not in others]
    if not fresh:
        return []
    return [SubQuery(text=" ".join(fresh), purpose="probe: " + ", ".join(fresh), kind=QueryKind.PROBE)]


__all__ = [
    "PlannerConfig",
    "bridge_candidates",
    "bridge_queries",
    "part_queries",
    "plan_question",
    "probe_queries",
    "property_words",
    "unresolved_words",
]
