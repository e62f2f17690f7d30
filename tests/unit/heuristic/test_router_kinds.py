"""Routing by the kind of question on 125 questions written for it (none from a benchmark): bridge questions
about described people, works, organisations and places; comparisons; support lookups.

`routing_kinds.tsv` holds `expected route<TAB>question`. Its first 60 rows guided the design of the kind cues,
the next 40 were written after a first version of them, the last 25 before the final version was tried
(figures in docs/answers.md).
"""

from __future__ import annotations

from pathlib import Path

from heuristic.router import route_question

ROWS = [line.split("\t", 1) for line in (Path(__file__).parent / "routing_kinds.tsv").read_text().splitlines()
        if line.strip()]


def test_the_set_covers_each_kind() -> None:
    kinds = {expected for expected, _ in ROWS}
    assert kinds == {"lookup", "multi_part", "multi_hop"} and len(ROWS) == 125


def test_route_accuracy_on_question_kinds_is_at_least_0_95() -> None:
    wrong = [(expected, question) for expected, question in ROWS
             if route_question(question.strip()).route.value != expected]
    assert len(wrong) / len(ROWS) <= 0.05, wrong
