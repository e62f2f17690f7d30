"""Partial answers: what the knowledge base says, then what it does not.

For a question asking a value ("how long …", "how much …", "when …") whose only unknown is a qualifier
naming one member of a kind the knowledge base knows ("… kept on the Starter plan?" where the plans are Free,
Team and Business): the value the evidence states for the question without that qualifier is the answer,
followed by a sentence saying the knowledge base does not mention the qualifier. A question whose subject is
the unknown name ("What does the Starter plan cost?") is not partial: nothing else is asked.

The grader scores passages against the question without such a qualifier too (`known_question`): the
passage stating the value for every plan is what answers, although it never names the unknown member.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.focus import missing_names
from heuristic.kinds import answer_kind
from investigation.state import Evidence, Grade, Passage
from investigation.text import fold, words

# A qualifier: a preposition, an optional determiner, the unknown name and the noun of its kind, ending the
# question ("on the Starter plan?", "for a Gold account?", "in the Nordmark region?").
_QUALIFIER = (r"\s+(?:on|for|in|with|under|at)\s+(?:(?:the|a|an|our|my|your)\s+)?{name}\s+"
              r"(?P<kind>[a-z][\w-]*)\s*[?.!]*\s*$")


@dataclass(frozen=True)
class Partial:
    """The question without its unknown qualifier, the sentence that says what is missing, and the same as a
    clause for the answer's first sentence."""

    question: str
    missing: str
    clause: str = ""


_FIRST_END = re.compile(r"\[\d+\](?=[.!?](?:\s|$))")


def with_missing(answer: str, partial: Partial) -> str:
    """The answer with what is missing said in its first sentence ("Drafts are kept for 45 days [1]; no
    Drifter tier is mentioned in the knowledge base."), so that a reader of the first sentence alone gets
    both the value and the correction; at the end when the first sentence has no citation to follow.
    Serves a value asked of a member the knowledge base does not know ("… on the Drifter tier?")."""
    end = _FIRST_END.search(answer)
    if end is None or not partial.clause:
        return f"{answer} {partial.missing}"
    return f"{answer[: end.end()]}; {partial.clause}{answer[end.end():]}"


def partial_question(question: str, absent: Sequence[str], evidence: Sequence[Evidence]) -> Partial | None:
    """The value question without its one unknown qualifier (`_QUALIFIER`), when the evidence names the
    qualifier's kind ("plan") and some evidence is graded correct; None otherwise."""
    if not any(e.grade is Grade.CORRECT for e in evidence):
        return None
    return _without_qualifier(question, absent, evidence)


def known_question(question: str, passages: Sequence[Evidence | Passage]) -> str | None:
    """The value question without a qualifier naming a member no passage mentions ("How long are backups
    kept?" for "… kept on the Starter plan?" when the passages name plans but no Starter plan); None when
    the question has no such qualifier."""
    if answer_kind(question) is None:
        return None
    partial = _without_qualifier(question, missing_names(question, passages), passages)
    return None if partial is None else partial.question


def _without_qualifier(question: str, absent: Sequence[str],
                       passages: Sequence[Evidence | Passage]) -> Partial | None:
    if len(absent) != 1 or answer_kind(question) is None:
        return None
    name = absent[0]
    match = re.search(_QUALIFIER.format(name=re.escape(name)), question, re.IGNORECASE)
    if match is None:
        return None
    kind = fold(match.group("kind"))
    known = {w for e in passages for w in words(f"{e.title} {e.text}")}
    if kind not in known and kind.rstrip("s") not in known and f"{kind}s" not in known:
        return None
    rest = question[: match.start()].rstrip(" ,") + "?"
    if len(words(rest)) < 3:
        return None
    missing = f"The knowledge base does not mention a {name} {match.group('kind')}."
    clause = f"no {name} {match.group('kind')} is mentioned in the knowledge base"
    return Partial(question=rest, missing=missing, clause=clause)
