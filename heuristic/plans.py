"""A plan the asker names by its price: "we're on the free plan", "the $39-a-month plan". A knowledge base
writes its rules per plan name ("Starter accounts cannot print more than 50 labels", "cost $199 on
Essentials"); the passage that prices the plans ("Starter is free …, Growth costs $49 per month", a table
row "| Essentials | $39 | …") says which name the price stands for.

Serves every question that says which plan the asker is on by what it costs, in a knowledge base whose
plans have names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.prose import units

# "the free plan", "the $39 plan", "the $39-a-month plan", "the €49/month plan".
_PRICED_PLAN = re.compile(
    r"(?<!\w)(?P<price>free|[$€£]\s?\d[\d,]*(?:\.\d+)?)(?:\s*(?:-|\s)(?:a|per)(?:-|\s)(?:month|year)|\s*/\s*(?:month|"
    r"mo|year|yr))?[- ]plan\b",
    re.IGNORECASE,
)
# How a passage prices a named plan in prose: "Starter is free", "Growth costs $49 per month", "Essentials is
# £39 base".
_PROSE_PRICE = re.compile(
    r"(?-i:\b(?P<name>[A-Z][a-z]+))\s+(?:is|costs|is\s+priced\s+at)\s+(?P<price>free\b|[$€£]\s?\d[\d,]*(?:\.\d+)?)",
    re.IGNORECASE,
)
# A table row, as `prose.units` reads it, that opens with a name ("Essentials: base fee $39; per person $6").
_ROW = re.compile(r"^(?P<name>[A-Z][a-z]+):\s(?P<cells>.*)$")
_AMOUNT = re.compile(r"(?<![\w.])[$€£]\s?\d[\d,]*(?:\.\d+)?(?![\d])")
# A plan named "Free" is asked by its name, not by its price.
_NAMED_FREE = re.compile(r"(?-i:\bFree\s+plan\b|\b[Oo]n\s+Free\b)")


def _amount(text: str) -> str:
    """A price as compared: "free" for free or zero, else the amount without spaces, commas and ".00"."""
    folded = re.sub(r"[\s,]", "", text.lower())
    if folded == "free" or re.fullmatch(r"[$€£]0+(?:\.0+)?", folded):
        return "free"
    return re.sub(r"\.0+$", "", folded)


def _priced_plans(text: str) -> dict[str, set[str]]:
    """The plans one passage prices, with their prices: only when it prices two or more names (a set of
    plans), so a lone "Shipping is free" is not read as a plan."""
    plans: dict[str, set[str]] = {}
    for unit in units(text):
        row = _ROW.match(unit.text) if unit.kind == "row" else None
        amounts = _AMOUNT.findall(row.group("cells")) if row else []
        if row and amounts:  # the first price of the row is the plan's own (a per-person fee follows)
            plans.setdefault(row.group("name"), set()).add(_amount(amounts[0]))
        for m in _PROSE_PRICE.finditer(unit.text) if unit.kind != "row" else ():
            plans.setdefault(m.group("name"), set()).add(_amount(m.group("price")))
    return plans if len(plans) >= 2 else {}


def as_named(question: str, texts: Sequence[str]) -> str:
    """`question` with a plan named by its price ("the free plan", "the $39-a-month plan") said by the name a
    text gives that price ("the Starter plan", "the Essentials plan"), when exactly one name has it."""
    if _PRICED_PLAN.search(question) is None:
        return question
    plans: dict[str, set[str]] = {}
    for text in texts:
        for name, prices in _priced_plans(text).items():
            plans.setdefault(name, set()).update(prices)

    def named(match: re.Match[str]) -> str:
        price = _amount(match.group("price"))
        if price == "free" and any(_NAMED_FREE.search(t) for t in texts):
            return match.group(0)
        names = [n for n, prices in plans.items() if price in prices]
        return f"{names[0]} plan" if len(names) == 1 else match.group(0)

    return _PRICED_PLAN.sub(named, question)
