"""Which tools a hop calls: the planner's cheap-first rule for tools.

Documents are always searched; a tool is added to hop 1 only when its description clearly matches the
question (or its answer is already cached, which costs nothing); later hops, which run only when the
evidence is insufficient, accept a weaker match. A tool is called at most once per investigation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from investigation.text import content_stems
from investigation.tools.declaration import ToolDeclaration
from investigation.tools.narrowing import named_in_question
from investigation.tools.policy import extract

FIRST_PERSON = re.compile(r"\b(i|i'm|i've|me|my|mine|we|we're|our|ours|us)\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    # The light stemmer gives "invoices" → "invoic" but keeps "invoice": drop a final "e" on both sides.
    return {s[:-1] if len(s) > 3 and s.endswith("e") else s for s in content_stems(text)}


@dataclass(frozen=True)
class SelectionConfig:
    first_hop: float = 0.5  # relevance a tool needs in hop 1
    later_hop: float = 0.3  # relevance a tool needs once the documents fell short
    cached: float = 0.25  # relevance enough when the answer is cached (free)
    first_person_bonus: float = 0.15  # a requester-scoped tool and a question about "my"/"our" things
    named_id: float = 0.8  # the question names a value of a parameter the tool's `pattern` recognises


@dataclass(frozen=True)
class ToolChoice:
    """A tool the hop will call, with the relevance and the rule that chose it (for the trace)."""

    name: str
    relevance: float
    reason: str


def named_ids(question: str, decl: ToolDeclaration) -> list[str]:
    """Question parameters whose declared `pattern` finds a value in the question (an order id, ...)."""
    named = [name for name, spec in decl.params.items()
             if spec.source == "question" and "pattern" in spec.json_schema and extract(spec, question)]
    if decl.select is not None and named_in_question(decl, question):
        named.append(decl.select.field)
    return named


def lacks_question_value(question: str, decl: ToolDeclaration) -> bool:
    """A required question parameter the question gives no value for: the tool cannot be asked at all
    (not a refusal — it is simply not a candidate)."""
    return any(spec.required and spec.source == "question" and not extract(spec, question)
               for spec in decl.params.values())


def field_words(decl: ToolDeclaration) -> str:
    """The names of the fields a tool returns, as words ("tracking_number" → "tracking number")."""
    leaves = (path.rsplit(".", 1)[-1].replace("[]", "") for path in decl.projection)
    return " ".join(leaf.replace("_", " ").replace("-", " ") for leaf in leaves)


def _described(decl: ToolDeclaration) -> set[str]:
    return _stems(f"{decl.display_name} {decl.description} {field_words(decl)}")


def _example_match(asked: set[str], decl: ToolDeclaration) -> float:
    """The best overlap (Dice) of the question with one of the declaration's `examples:` questions."""
    best = 0.0
    for example in decl.examples:
        said = _stems(example)
        if asked and said:
            best = max(best, 2 * len(asked & said) / (len(asked) + len(said)))
    return best


def matched(question: str, decl: ToolDeclaration) -> list[str]:
    """The question's words the tool declares (description, field names, examples): why it was chosen."""
    declared = _described(decl).union(*(_stems(e) for e in decl.examples))
    words = (w.casefold() for w in re.findall(r"[\w'-]+", question))
    return list(dict.fromkeys(w for w in words if _stems(w) & declared))


def relevance(question: str, decl: ToolDeclaration, similarity: float | None = None,
              config: SelectionConfig | None = None) -> float:
    """How well what the tool declares matches the question, 0..1: the words of its name, description
    and field names, its `examples:` questions, the embedding similarity when one is given (of the
    description or the closest example), a bonus when a requester-scoped tool meets a first-person
    question, and a floor when the question names an id a declared `pattern` recognises."""
    config = config or SelectionConfig()
    asked = _stems(question)
    lexical = len(asked & _described(decl)) / len(asked) if asked else 0.0
    score = max(lexical, _example_match(asked, decl))
    if similarity is not None:
        score = max(score, min(1.0, max(0.0, (similarity - 0.2) / 0.5)))
    if decl.policy.subject == "requester" and FIRST_PERSON.search(question):
        score += config.first_person_bonus
    if named_ids(question, decl):
        score = max(score, config.named_id)
    return round(min(score, 1.0), 4)


def choose(question: str, hop: int, candidates: Sequence[ToolDeclaration], *, called: set[str],
           cached: set[str] | None = None, similarity: Mapping[str, float] | None = None,
           config: SelectionConfig | None = None, limit: int = 3) -> list[ToolChoice]:
    """The tools to call in `hop`, best first, at most `limit` (candidates are already policy-allowed)."""
    config = config or SelectionConfig()
    cached = cached or set()
    picked: list[ToolChoice] = []
    for decl in candidates:
        if decl.name in called:
            continue
        score = relevance(question, decl, (similarity or {}).get(decl.name), config)
        named = named_ids(question, decl)
        words = ", ".join(matched(question, decl)) or "by meaning"
        if named and score >= config.named_id:
            picked.append(ToolChoice(decl.name, score, f"the question names a {', '.join(named)} its pattern "
                                                       "recognises"))
        elif decl.name in cached and score >= config.cached:
            picked.append(ToolChoice(decl.name, score, "cached answer, relevant to the question"))
        elif hop <= 1 and score >= config.first_hop:
            picked.append(ToolChoice(decl.name, score, f"declared words match the question ({words})"))
        elif hop > 1 and score >= config.later_hop:
            picked.append(ToolChoice(decl.name, score, f"documents fell short; declared words match ({words})"))
    picked.sort(key=lambda c: (-c.relevance, c.name))
    return picked[:limit]
