"""The limit that decides a yes/no question about the asker's own amount or time.

For yes/no questions that state an amount of money or a length of time ("A funding debit of $30,000 failed.
Can the agent approve the exception alone?", "Can I get a refund on my annual plan after two months?"): the
sentence setting a limit of the same kind on what is asked ("limited to $25,000 per pay run", "not refunded
after the first 30 days") decides the answer, so it leads. A limit the asker's value falls inside of leads
before one it falls outside of; the yes/no verdict is said only when the asker's value is inside the limit
(outside it, the sentence with its number speaks for itself).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.absent import asked_action
from heuristic.chains import Sentence
from heuristic.pick_scoring import content_stems
from heuristic.verdicts import is_yes_no, yes_no_prefix
from investigation.text import ask_sentence

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 30, "year": 365}
_AMOUNT = r"(?P<n>\d[\d,]*(?:\.\d+)?|" + "|".join(_NUMBERS) + r")"
_MONEY = re.compile(r"[$€£]\s?" + _AMOUNT)
_TIME = re.compile(_AMOUNT + r"\s+(?:business\s+|calendar\s+)?(?P<unit>hour|day|week|month|year)s?\b",
                   re.IGNORECASE)
# What bounds a value from above ("limited to $25,000": inside when at most it) or from below ("after the
# first 30 days": inside when beyond it), in the few words before the value.
_UPPER = re.compile(r"\b(?:limited\s+to|up\s+to|at\s+most|within|less\s+than|under|below|younger\s+than|"
                    r"before|maximum(?:\s+of)?|no\s+more\s+than)\s+(?:the\s+)?(?:first\s+)?$", re.IGNORECASE)
# How long the asked action can be done ("PDFs can be downloaded for 90 days" for "Can I still download the
# PDF?") bounds it too, in a sentence saying that action (`absent.asked_action`).
_LASTING = re.compile(r"\bfor\s+(?:the\s+)?(?:first\s+)?$", re.IGNORECASE)
_LOWER = re.compile(r"\b(?:after|more\s+than|over|above|older\s+than|at\s+least|beyond|minimum(?:\s+of)?|"
                    r"larger\s+than|exceeding)\s+(?:the\s+)?(?:first\s+)?$", re.IGNORECASE)


def _value(match: re.Match[str], days: bool) -> float:
    raw = match.group("n").lower().replace(",", "")
    number = float(_NUMBERS.get(raw, 0) or raw)
    return number * _DAYS[match.group("unit").lower()] if days else number


def _limits(text: str, action: str | None = None) -> list[tuple[bool, float, bool]]:
    """(is a length of time, value, upper bound) of each bounded value in `text`; how long `action` lasts
    ("for 90 days") when `text` says that action."""
    lasting = action is not None and action in content_stems(text)
    out = []
    for pattern, days in ((_MONEY, False), (_TIME, True)):
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 30): match.start()]
            lasts = days and lasting and _LASTING.search(before) is not None
            upper = _UPPER.search(before) is not None or lasts
            if upper or _LOWER.search(before):
                out.append((days, _value(match, days), upper))
    return out


# How long ago the asker's own event was, said relatively ("signed up last month"): one of that unit.
_LAST = re.compile(r"\blast\s+(?P<unit>week|month|year)\b|\b(?P<day>yesterday)\b", re.IGNORECASE)


def _asked_values(question: str) -> dict[bool, float]:
    """The question's first amount of money (False) and first length of time (True)."""
    found: dict[bool, float] = {}
    for pattern, days in ((_MONEY, False), (_TIME, True)):
        match = pattern.search(question)
        if match is not None:
            found[days] = _value(match, days)
    last = _LAST.search(question)
    if True not in found and last is not None:
        found[True] = 1.0 if last.group("day") else float(_DAYS[last.group("unit").lower()])
    return found


def _inside(question: str, sentence: str) -> bool | None:
    """Whether the question's value falls inside a limit of the sentence (None: the sentence sets none)."""
    return _inside_of(_asked_values(question), asked_action(question), sentence)


def _inside_of(asked: dict[bool, float], action: str | None, sentence: str) -> bool | None:
    """`_inside` with the question's values (`_asked_values`) and asked action (`asked_action`) given."""
    verdicts = [value <= bound if upper else value > bound
                for days, bound, upper in _limits(sentence, action)
                for kind, value in asked.items() if kind == days]
    return None if not verdicts else any(verdicts)


def deciding_limit(question: str, candidates: Sequence[Sentence]) -> Sentence | None:
    """The sentence whose limit decides a yes/no question stating an amount or a time, sharing a word with
    the asking sentence (the limit the asker's value falls inside of first, then the most shared words)."""
    values = _asked_values(question)
    if not is_yes_no(question) or not values:
        return None
    asked = content_stems(ask_sentence(question))
    action = asked_action(question)
    scored = [(c, _inside_of(values, action, c.text)) for c in candidates if c.stems & asked]
    deciding = [(c, inside) for c, inside in scored if inside is not None]
    if not deciding:
        return None
    return max(deciding, key=lambda ci: (bool(ci[1]), len(ci[0].stems & asked), -ci[0].index,
                                         -ci[0].position))[0]


def verdict_prefix(question: str, lead: str) -> str:
    """`yes_no_prefix`, except after a limit the asker's value falls outside of (the limit speaks)."""
    if is_yes_no(question) and _inside(question, lead) is False:
        return ""
    return yes_no_prefix(question, lead)
