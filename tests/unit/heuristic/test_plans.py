"""A plan named by its price is said by the name the passages give that price (made-up text)."""

from __future__ import annotations

import pytest

from heuristic.plans import as_named

PROSE = ("Zorblet offers three plans. Pebble is free and includes 10 crates a month. "
         "Boulder costs $25 per month and includes 500 crates. Summit costs $90 per month.")
TABLE = ("| plan | base fee | per seat |\n|---|---|---|\n| Pebble | $0 | $0 |\n| Boulder | $25 | $4 |\n"
         "| Summit | $90 | $7 |")
# As a chunk holds it: the table's lines joined by spaces.
JOINED = TABLE.replace("\n", " ")


@pytest.mark.parametrize(
    ("question", "texts", "expected"),
    [
        ("We're on the free plan. Can we add a seat?", [PROSE],
         "We're on the Pebble plan. Can we add a seat?"),
        ("We're on the $25-a-month plan: is SSO included?", [PROSE],
         "We're on the Boulder plan: is SSO included?"),
        ("Does the $90/month plan include SSO?", [TABLE], "Does the Summit plan include SSO?"),
        ("We pay for the $25 per month plan.", [JOINED], "We pay for the Boulder plan."),
        ("We're on the free plan.", [TABLE], "We're on the Pebble plan."),  # $0 is free
        # No plan has that price, or two have it: the question stays as asked.
        ("We're on the $30 plan.", [PROSE], "We're on the $30 plan."),
        ("We're on the $25 plan.", [PROSE, "Gravel costs $25 per month. Sand costs $5."],
         "We're on the $25 plan."),
        # A lone priced name is no set of plans ("Shipping is free").
        ("We're on the free plan.", ["Shipping is free on every order."], "We're on the free plan."),
        # A plan called Free is asked by its name.
        ("We're on the free plan.", [PROSE, "On Free, runs stop at 5 minutes."], "We're on the free plan."),
        # No plan named by price.
        ("Is Boulder $25?", [PROSE], "Is Boulder $25?"),
    ],
)
def test_a_plan_named_by_its_price(question: str, texts: list[str], expected: str) -> None:
    assert as_named(question, texts) == expected
