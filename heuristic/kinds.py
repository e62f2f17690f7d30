"""What a question asks for: the kind of value that answers it (a duration, a deadline, a price, a place, a
date, a number, a measured quantity) and the clause that asks it ("… a musician whose godfather is whom?")."""

from __future__ import annotations

import re

from investigation.text import STOPWORDS, ask_sentence, content_stems, fold, stem

# A length of time in digits ("30 days", "2-3 business days") or in words ("several hours", "a few minutes").
_DURATION = re.compile(r"\b(?:\d[\d,.]*\s*(-|to\s+\d+\s*)?|(?:one|two|three|four|five|six|seven|eight|nine|"
                       r"ten|eleven|twelve|a\s+few|few|several|a\s+couple\s+of)\s+)(business\s+|calendar\s+|"
                       r"working\s+)?(seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)
# A number with its unit: a duration, a share, an amount of money or of data.
_QUANTITY = re.compile(
    r"[$€£]\s?\d|\b\d[\d,.]*\s*(?:%|percent\b|(?:k|m|g|t)b\b|(?:seconds?|minutes?|hours?|days?|"
    r"weeks?|months?|years?)\b|(?:usd|eur|gbp|dollars?|euros?)\b)",
    re.IGNORECASE,
)
# Month names; "may" only as "May" (the modal verb "may approve" is no date).
_MONTH = (r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b|"
          r"(?-i:\bMay\b)")
_MEASURE = re.compile(
    r"\b(?:population|attendance|capacity|enrollment|elevation|height|area)\b", re.IGNORECASE
)
# "where" opening a clause asks a place, after a dash too ("we need X on invoices - where do we enter it?").
_PLACE_ASKED = re.compile(
    r"(?:^|[.?!;,]\s*|\s[-\u2013\u2014]\s*|\band\s+)where\b|\b(?:what|which)\s+(?:[a-z]+\s+)?(?:city|town|state|country|county|province|"
    r"region|island|village|nation|continent|borough|district|location)\b",
    re.IGNORECASE,
)
# A place as prose names it: "in Columbus", "from Portland, Oregon", "at Fort Worth" (case matters here).
_PLACE = re.compile(
    r"\b(?:in|at|from|near)\s+(?:the\s+)?[A-Z][\w'-]+|\b[A-Z][\w'-]+,\s+[A-Z][\w'-]+|→|\bsettings\b"
)
# A web address: it says by its shape that it is one, whatever words stand around it.
URL = re.compile(
    r"https?://[\w.-]+|\b[a-z][\w-]*(?:\.[\w-]+)+\.(?:com|example|io|net|org|dev|app)\b", re.IGNORECASE
)
_ANSWER_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    # "Up to what declared value …?" asks the bound the answer states the same way: "up to $5,000".
    (re.compile(r"\bup\s+to\s+(?:what|which)\b", re.IGNORECASE),
     re.compile(r"\bup\s+to\s+(?:[$€£]\s?)?\d", re.IGNORECASE)),
    (
        re.compile(
            r"\b(?:which|what)\s+(?:[\w-]+\s+)?(?:url|endpoint|base\s+url|address|domain|host(?:name)?)\b",
            re.IGNORECASE,
        ),
        URL,
    ),
    (
        re.compile(
            r"\bhow\s+(long|soon|quickly|fast|many\s+(days|hours|minutes|weeks|months|years))\b|"
            r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w-]+\s+){0,3}(?:timeout|retention(?:\s+period)?|lifetime|"
            r"duration|grace\s+period|trial(?:\s+period)?)\b",
            re.IGNORECASE,
        ),
        _DURATION,
    ),
    # "By when must …": a deadline is a date or a time from an event ("within 30 days after …").
    (
        re.compile(r"\b(?:by|until|till)\s+when\b|\bdeadline\b|\bhow\s+late\b", re.IGNORECASE),
        re.compile(_DURATION.pattern + r"|\b(1[0-9]{3}|20[0-9]{2})\b|" + _MONTH
                   + r"|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*[ap]\.?m\b", re.IGNORECASE),
    ),
    (
        re.compile(
            r"\bhow\s+much\b.*\b(cost|price|charge|pay|fee)|\b(cost|price|fee|charge)s?\b.*\?|\bhow\s+much\s+is\b",
            re.IGNORECASE,
        ),
        # A price may be a share of something ("costs 1% of the declared value"); an amount after "up to" is a
        # bound ("insures a parcel up to $5,000"), not what something costs ("up to what" asks a bound).
        re.compile(r"(?<!up to )(?:[$€£]\s?\d|\b\d[\d,.]*\s*(usd|eur|gbp|dollars?|euros?)\b)|\bfree\b|"
                   r"\b\d[\d.]*\s*%\s+of\b", re.IGNORECASE),
    ),
    (_PLACE_ASKED, _PLACE),
    (
        # "What are the support hours?" asks for times of day too ("from 8 a.m. to 8 p.m.", "9:00 to 17:00").
        # "What was the release date of …?" asks a date as "when" does, the date named after its qualifier.
        re.compile(r"\bwhen\b|\b(?:what|which)\s+(date|year|day|time|decade|century)\b|"
                   r"\bwhat(?:'s|\s+is|\s+was|\s+were)\s+the\s+(?:[\w-]+\s+){0,2}?(?:date|year|day)\b|"
                   r"\b(?:support|opening|office|business|working)\s+hours\?", re.IGNORECASE),
        re.compile(
            r"\b(1[0-9]{3}|20[0-9]{2})s?\b|"
            + _MONTH
            + r"|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*[ap]\.?m\b|\b\d{1,2}(?:st|nd|rd|th)\s+century\b",
            re.IGNORECASE,
        ),
    ),
    (
        re.compile(
            r"\bhow\s+(many|much|often|far|big|large|fast|tall|high|old)\b|\bwhat\s+(number|percentage|share)\b|"
            r"\b(limit|maximum|minimum|max|min|smallest|lowest|least|fewest|largest|biggest|highest)\b|"
            + _MEASURE.pattern,
            re.IGNORECASE,
        ),
        # Not the digits of a code ("PCL-3002", "ERR_4021", "v2"): a code names the situation, not a value.
        re.compile(r"(?<![\w-])\d[\d,.]*\b"),
    ),
)

# "How much credit do we get and by when must we claim it?": a second question joined to the first.
_SECOND_ASK = re.compile(r",?\s+(?:and|&)\s+(?=(?:by\s+when|when|how|what|which|where|who|whom|why)\b)",
                         re.IGNORECASE)


def ask_clauses(question: str) -> list[str]:
    """The questions the asking sentence joins with "and" ("How much credit do we get", "by when must we claim
    it?"), in order; the asking sentence alone when it asks one thing."""
    ask = ask_sentence(question)
    return [c.strip() for c in _SECOND_ASK.split(ask) if c.strip()] or [ask]


def answer_kinds(question: str) -> list[tuple[str, re.Pattern[str] | None]]:
    """Each asking clause with the kind of value that answers it (`ask_clauses`, `answer_kind`)."""
    clauses = ask_clauses(question)
    if len(clauses) < 2:
        return [(question, answer_kind(question))]
    return [(c, _kind_of(c)) for c in clauses]


def answer_kind(question: str) -> re.Pattern[str] | None:
    """What an answer to this question looks like: "how many times" → a number of times; else a duration,
    a price, a date, a number or a place. When the asking sentence joins two questions, the first one's."""
    clauses = ask_clauses(question)
    if len(clauses) >= 2:
        first = _kind_of(clauses[0])
        if first is not None:
            return first
    return _kind_of(question)


# A price asked in a named currency ("… on Team in euros?") is answered by an amount in that currency.
_CURRENCIES = (
    (
        re.compile(r"\b(?:in|into)\s+(?:euros?|eur)\b|€", re.IGNORECASE),
        r"€\s?\d|\beur\s?\d|\d\s?(?:eur|euros?)\b",
    ),
    (
        re.compile(r"\b(?:in|into)\s+(?:pounds?(?:\s+sterling)?|gbp|sterling)\b|£", re.IGNORECASE),
        r"£\s?\d|\bgbp\s?\d|\d\s?(?:gbp|pounds?)\b",
    ),
    (
        re.compile(r"\b(?:in|into)\s+(?:(?:us\s+)?dollars?|usd)\b", re.IGNORECASE),
        r"(?<![A-Za-z])\$\s?\d|\busd\s?\d|\d\s?(?:usd|dollars?)\b",
    ),
)


_PRICE_ASKED = _ANSWER_KINDS[4][0]
# Repetitions counted under any of their names ("how many retry attempts", "how many tries") are answered as
# a number of times or of attempts ("attempted up to 12 times", "3 retries").
_REPEATS_ASKED = re.compile(r"\bhow\s+many\s+(?:[a-z-]+\s+)?(?:attempts?|retries|tries|times)\b",
                            re.IGNORECASE)
_REPEATS = re.compile(r"\b\d+\s*(?:times|attempts?|retries|tries)\b", re.IGNORECASE)


def _kind_of(question: str) -> re.Pattern[str] | None:
    for names, amounts in _CURRENCIES:
        if names.search(question) and _PRICE_ASKED.search(question):  # a price question
            return re.compile(amounts, re.IGNORECASE)
    if _REPEATS_ASKED.search(question):
        return _REPEATS
    counted = re.search(r"\bhow\s+(many|much)\s+([a-z]{3,})", question, re.IGNORECASE)
    if counted and counted.group(2).lower() not in (
        "time",
        "longer",
        "more",
        "does",
        "do",
        "is",
        "are",
        "will",
    ):
        noun = re.escape(stem(counted.group(2).lower())[:5])
        pattern = r"\b\d[\d,.]*\s*(?:[a-z-]+\s+){0,2}" + noun
        if counted.group(1).lower() == "much":
            # "How much storage" → "1 GB of storage", but "how much clock skew / notice / credit" is a
            # quantity in some unit: "3 minutes", "72 hours", "10%".
            pattern += "|" + _QUANTITY.pattern
        return re.compile(pattern, re.IGNORECASE)
    for asks, looks in _ANSWER_KINDS:
        if asks.search(question):
            return looks
    return None


def measure_of(question: str) -> set[str]:
    """The measured quantity a number question names ("what was the population of …" → population): a
    number answers it only next to that word, not a birth year of the same passage."""
    found = _MEASURE.search(question)
    return content_stems(found.group(0)) if found else set()



def typed_near(text: str, kind: re.Pattern[str] | None, asked: set[str]) -> bool:
    """The asked kind of value sits right after an asked word ("based in Philadelphia" for "based in what
    state"), not just anywhere in the sentence ("compete in the National Football League")."""
    if kind is None:
        return False
    for match in kind.finditer(text):
        before = text[max(0, match.start() - 40): match.start()]
        if content_stems(before) & asked:
            return True
    return False


_WH_WORD = re.compile(r"\b(?:who|whom|whose|which|what|where|when|how)\b", re.IGNORECASE)


def _relative(question: str, start: int) -> bool:
    """A wh-word right after a noun opens a relative clause ("the city where …", "a musician whose …"); after
    the start, punctuation, a preposition or a verb it asks ("…, what was …", "based in what state")."""
    before = question[:start].rstrip()
    if not before or before[-1] in ".,;:?!(\"“":
        return False
    previous = re.findall(r"[\w'-]+", before)
    return bool(previous) and fold(previous[-1]) not in STOPWORDS


def focus_terms(question: str) -> set[str]:
    """The terms of the clause that asks ("Who was the first president of the association which …" →
    first, president, association; "… a musician whose godfather is whom?" → godfather): what the end of a
    chain must say, beyond what identifies the entities on the way."""
    marks = [(m.start(), m.end(), _relative(question, m.start())) for m in _WH_WORD.finditer(question)]
    asking = [m for m in marks if not m[2]]
    if not asking:
        return set()
    start, end, _ = asking[-1]
    following = [m[0] for m in marks if m[0] >= end]
    stems = content_stems(question[end: following[0] if following else len(question)])
    if stems:
        return stems
    preceding = [m[1] for m in marks if m[1] <= start]
    return content_stems(question[preceding[-1] if preceding else 0: start])
