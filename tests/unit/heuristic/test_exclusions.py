"""A yes/no question about a case that a rule leaves out by what it involves (made-up text)."""

from __future__ import annotations

import pytest

from heuristic.chains import Sentence
from heuristic.exclusions import excluded_case
from heuristic.synthesis import synthesize_answer
from investigation.state import Route, RouteDecision
from investigation.text import content_stems
from tests.unit.investigation.fakes import evidence


def sentence(index: int, text: str) -> Sentence:
    return Sentence(index, 0, text, frozenset(content_stems(text)), 1.0, 0.0)


PAID = sentence(0, "An approved crate claim is paid to your Zorblet balance within 5 days.")
LEFT_OUT = sentence(1, "Glass vases, live plants and cash are never covered.")
CANDIDATES = [PAID, LEFT_OUT]


@pytest.mark.parametrize(
    ("question", "decided_by"),
    [
        ("We sent two glass vases with Crate Cover and they broke. Will the claim be paid?", LEFT_OUT),
        ("Are live plants covered by Crate Cover?", LEFT_OUT),
        # A word the rule names but not the thing: "glass" alone is no glass vase.
        ("We sent glass jars with Crate Cover and they broke. Will the claim be paid?", None),
        # Not a yes/no question: the rule is not its answer alone.
        ("How long does a claim for glass vases take to be paid?", None),
    ],
)
def test_the_rule_leaving_out_what_the_question_names(question: str, decided_by: Sentence | None) -> None:
    assert excluded_case(question, CANDIDATES) is decided_by


def test_the_rule_leads_the_answer() -> None:
    passages = [
        evidence("cover#0", "Crate Cover", "An approved crate claim is paid to your Zorblet balance within 5 "
                 "days. Crate Cover insures a crate for its declared value. Glass vases, live plants and "
                 "cash are never covered."),
    ]
    answer = synthesize_answer(
        "We sent two glass vases with Crate Cover and the crate never arrived. Will the claim be paid?",
        RouteDecision(route=Route.LOOKUP, confidence=1.0, reason="test"), passages)
    assert answer.text.split(" [1]")[0].endswith("Glass vases, live plants and cash are never covered")
