"""Sufficiency judgment: does the graded evidence cover the question's entities and content words?

A question with an unresolved description ("the country where …") is only sufficient once a bridging
hop has brought back correct evidence about what the description resolved to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.absent import asked_missing
from heuristic.bridges import bridge_depth, has_bridge_cue
from heuristic.focus import focus_names, missing_names
from heuristic.grader import resolves_bridge
from investigation.state import Evidence, Grade, Judgment, Plan, PlanKind
from investigation.text import (
    body_stems,
    content_stems,
    content_words,
    entities,
    fold,
    query_key,
    stem,
    words,
)


@dataclass(frozen=True)
class SufficiencyConfig:
    """Coverage thresholds."""

    content_coverage: float = 0.8
    subquery_coverage: float = 0.6


def question_names(question: str) -> list[str]:
    """The names a question is about (titles and capitalised spans, generic words dropped)."""
    out = []
    for name in entities(question):
        stems = content_stems(name)
        if stems and not all(len(s) <= 2 for s in stems):
            out.append(name)
    return out


def covers(name: str, evidence: Evidence) -> bool:
    """True when an evidence passage mentions `name` (as a phrase, or all its words)."""
    body = f"{evidence.title} {evidence.text}"
    return fold(name) in fold(body) or content_stems(name) <= body_stems(evidence.title, evidence.text)


def judge_evidence(question: str, plan: Plan, evidence: Sequence[Evidence],
                   config: SufficiencyConfig = SufficiencyConfig()) -> Judgment:
    """Typed judgment over ALL evidence so far (correct evidence counts fully, ambiguous only for names),
    with the policy's signals: absent names, whether the latest hop resolved a bridge, the useful hops."""
    absent = absent_names(question, evidence)
    latest = max((e.hop for e in evidence), default=0)
    signals = {
        "absent": tuple(absent),
        "bridge_resolved": any(resolves_bridge(question, e) for e in evidence if e.hop == latest)
        if latest > 1 else None,
        # Measured: a third hop paid off only for questions that nest two descriptions or more.
        "max_useful_hops": 2 if bridge_depth(question) < 2 else None,
    }
    judged = _judge(question, plan, evidence, [f"absent: {n}" for n in absent], config)
    return judged.model_copy(update=signals)


def _judge(question: str, plan: Plan, evidence: Sequence[Evidence], absent: list[str],
           config: SufficiencyConfig) -> Judgment:
    correct = [e for e in evidence if e.grade is Grade.CORRECT]
    supporting = correct + [e for e in evidence if e.grade is Grade.AMBIGUOUS]
    if plan.kind is PlanKind.DECOMPOSED:
        judged = _judge_parts(question, plan, evidence, supporting)
        if absent:
            judged = judged.model_copy(update={"sufficient": False, "missing_information": (
                *judged.missing_information, *absent)})
        return judged
    names = question_names(question)
    missing = [f"entity: {n}" for n in names if not any(covers(n, e) for e in supporting)]
    missing.extend(absent)

    question_stems = content_stems(question)
    covered_stems: set[str] = set()
    for e in correct:
        covered_stems |= body_stems(e.title, e.text) & question_stems
    coverage = len(covered_stems) / len(question_stems) if question_stems else 0.0
    uncovered = [w for w in content_words(question) if stem(w) not in covered_stems]
    if uncovered and coverage < config.content_coverage:
        missing.append("unresolved: " + " ".join(dict.fromkeys(uncovered)))

    answered: list[str] = []  # (a decomposed plan was judged part by part above)
    for sub in plan.subqueries:
        sub_stems = content_stems(sub.text)
        best = max((len(sub_stems & body_stems(e.title, e.text)) / max(1, len(sub_stems))
                    for e in correct), default=0.0)
        if best >= config.subquery_coverage:
            answered.append(sub.text)

    bridged = any(e.hop > 1 and e.grade is Grade.CORRECT and query_key(e.query) != query_key(question)
                  for e in evidence)
    needs_bridge = has_bridge_cue(question)
    if needs_bridge and not bridged:
        missing.append("bridge: the entity the question describes is not resolved yet")

    conflicts = _conflicting_titles(correct)
    unanswered = [s.text for s in plan.subqueries if s.text not in answered]
    sufficient = bool(correct) and not missing and not unanswered
    top = sorted((e.score for e in correct), reverse=True)[:3]
    strength = sum(top) / len(top) if top else 0.0
    name_share = 1.0 - (sum(1 for m in missing if m.startswith("entity:")) / len(names) if names else 0.0)
    confidence = max(0.0, min(1.0, 0.4 * coverage + 0.3 * name_share + 0.3 * min(1.0, strength)))
    return Judgment(
        sufficient=sufficient,
        answered_subqueries=tuple(answered),
        missing_information=tuple(missing),
        conflicts=tuple(conflicts),
        confidence=round(confidence, 4),
    )


def entity_found(name: str, evidence: Sequence[Evidence], supporting: Sequence[Evidence]) -> bool:
    """A compared entity is found when a passage is titled by it, or supporting evidence mentions it."""
    key = fold(name)
    return any(key in fold(e.title) or fold(e.title) in key for e in evidence) or any(
        covers(name, e) for e in supporting)


def _judge_parts(question: str, plan: Plan, evidence: Sequence[Evidence],
                 supporting: Sequence[Evidence]) -> Judgment:
    """A decomposed question is sufficient when every part (compared entity) has its evidence."""
    parts = [s for s in plan.subqueries if s.text != plan.original]
    answered, missing = [], []
    for sub in parts:
        name = sub.purpose.removeprefix("entity: ") if sub.purpose.startswith("entity: ") else sub.text
        if entity_found(name, evidence, supporting):
            answered.append(sub.text)
        else:
            missing.append(f"entity: {name}")
    share = len(answered) / len(parts) if parts else 0.0
    top = sorted((e.score for e in supporting), reverse=True)[: max(1, len(parts))]
    strength = sum(top) / len(top) if top else 0.0
    return Judgment(
        sufficient=bool(parts) and not missing and bool(supporting),
        answered_subqueries=tuple(answered),
        missing_information=tuple(missing),
        conflicts=tuple(_conflicting_titles([e for e in supporting if e.grade is Grade.CORRECT])),
        confidence=round(max(0.0, min(1.0, 0.6 * share + 0.4 * min(1.0, strength))), 4),
    )


def _conflicting_titles(correct: Sequence[Evidence]) -> list[str]:
    """Two correct passages with the same title but different sources may disagree: name them."""
    by_title: dict[str, set[str]] = {}
    for e in correct:
        by_title.setdefault(fold(e.title), set()).add(e.source_id)
    return [
        f"several sources titled {title!r}" for title, sources in sorted(by_title.items()) if len(sources) > 1
    ]


def absent_names(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The specific names of the question that no evidence passage mentions: all of them while only hop 1
    has run (a probe for them comes next), then only those that decide the matter."""
    if not evidence:
        return []
    if all(e.hop <= 1 for e in evidence):
        names = missing_names(question, evidence)
        return names or _unless_recorded(asked_missing(question, evidence), evidence)
    return unsupported_names(question, evidence)


def _record_answers(evidence: Sequence[Evidence]) -> bool:
    """A tool's record of the asker's own case agrees with the question (graded correct)."""
    return any(e.source_id.startswith("tool:") and e.grade is Grade.CORRECT for e in evidence)


def _unless_recorded(terms: list[str], evidence: Sequence[Evidence]) -> list[str]:
    """The asked-about ordinary words no passage mentions (`missing_terms`), unless a tool's record answers:
    then they are the asker's own words about that record ("is it too late?"), not a feature the knowledge
    base lacks. Names and codes (`missing_names`) are never excused this way."""
    return [] if _record_answers(evidence) else terms


def unsupported_names(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """Names of the question that no evidence mentions, when that makes the question unanswerable here:
    none of its names is mentioned, or no evidence agrees with the question well enough to be correct.
    (A question whose other names are all found in correct evidence keeps going despite one odd name.)

    What a yes/no, offer or price question asks about (`focus.asked_terms`: "desktop app", "on-premise
    appliance") is its focus when no name is missing: no evidence mentioning it, no other name vouches for
    it."""
    missing = missing_names(question, evidence)
    if not missing:
        return _unless_recorded(asked_missing(question, evidence), evidence)
    # A name most passages mention (the product, the company: "Acme Cloud") tells nothing about whether the
    # knowledge base covers what is asked; only a found name that is specific to some passages vouches.
    found = [n for n in focus_names(question) if fold(n) not in {fold(m) for m in missing}]
    specific = [n for n in found if not _ubiquitous(n, evidence)]
    if specific and any(e.grade is Grade.CORRECT for e in evidence):
        return []
    return missing


def _ubiquitous(name: str, evidence: Sequence[Evidence]) -> bool:
    """True when at least 4 passages and over half of them mention `name`."""
    holders = sum(covers(name, e) for e in evidence)
    return holders >= 4 and holders > 0.5 * len(evidence)


def has_support(question: str, evidence: Sequence[Evidence]) -> bool:
    """True when some evidence agrees with the question at least ambiguously (a graded band, not a guess),
    and the question's specific names occur in the evidence.

    Out-of-corpus questions retrieve only passages that share a few words with them; their agreement
    stays in the incorrect band. In a one-product knowledge base everything is on topic, so what tells
    them apart there is a name ("Kubernetes", "FedRAMP") that no passage mentions.
    """
    if not words(question) or not any(e.grade is not Grade.INCORRECT for e in evidence):
        return False
    return not unsupported_names(question, evidence)
