"""What an existence, offer, price or "can I …" question asks about, in the question's own words.

`heuristic.focus.missing_terms` asks whether the evidence mentions these words at all; a feature the
knowledge base never mentions is not answered from the passages next to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from investigation.text import content_words

# What an existence, offer or price question asks about, in its own (often lowercase) words: "Is there a
# desktop app for Windows?", "Do you offer freight quotes?", "Do you give nonprofits a discount?", "the price
# of the thermal label printer". A feature the knowledge base never mentions is not answered from the passages
# next to it.
# The verbs of an offer ("Do you offer …", "Does Parcelo have …").
_OFFERING = r"offer|provide|have|sell|support|make|include|give"
ASKED_THING = (
    re.compile(r"\b(?:is|are)\s+there\s+(?:an?|any|some)?\s*(?P<np>[^?.;]+)", re.IGNORECASE),
    # "Do you offer …", "Does Parcelo have …" — the provider is asked; "how long do we have" is not an offer.
    re.compile(r"\b(?:do|does)\s+(?:you|your\s+\w+|(?-i:[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?))\s+"
               r"(?:" + _OFFERING + r")\s+"
               r"(?!to\b)(?:an?|any|some)?\s*(?P<np>[^?.;]+)", re.IGNORECASE),
    re.compile(r"\b(?:price|cost)\s+of\s+(?:the|an?)?\s*(?P<np>[^?.;]+)", re.IGNORECASE),
    # What one asks to become ("How does a consultancy become an authorized reseller?"): a role or status the
    # provider grants, which a passage must name.
    re.compile(r"\bbecome\s+(?:an?|the)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
    # "Is Saturday delivery available …?": the thing whose availability is asked. "Where can I download the
    # mobile app?": the thing to be had.
    re.compile(r"(?:^|[.,;!?]\s*)(?:is|are)\s+(?!(?:it|there|this|that|they|we|you|i)\b)(?P<np>[^?.;]{3,40}?)\s+"
               r"available\b", re.IGNORECASE),
    re.compile(r"\bwhere\s+(?:can|could|do|should)\s+(?:i|we)\s+(?:download|install|buy|order)\s+"
               r"(?:the|an?|your)?\s*(?P<np>[^?.;]+)", re.IGNORECASE),
    # The same price asked in its other shapes: "How much is the thermal printer?", "How much does the
    # on-premise appliance cost?", "How much does Parcelo charge for its fulfillment service?". A determiner
    # marks the priced thing, so "how much is each label over …" or "how much does it cost to …" stay out.
    re.compile(r"\bhow\s+much\s+(?:is|are)\s+(?:the|an?)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
    re.compile(r"\bhow\s+much\s+(?:does|do)\s+(?:the|an?)\s+(?P<np>[^?.;]+?)\s+cost\b", re.IGNORECASE),
    re.compile(r"\bhow\s+much\s+(?:does|do)\s+(?:you|(?-i:[A-Z][\w-]*))\s+(?:charge|ask)\s+for\s+"
               r"(?:the|an?|its|your)?\s*(?P<np>[^?.;]+)", re.IGNORECASE),
    # A count asked of a named thing ("How many vacation days does Wagely give its staff?", "How many
    # workspaces does Team include?"): the counted thing is what a passage must name.
    re.compile(r"\bhow\s+many\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:does|do|did|can|will)\s+"
               r"(?:you\b|(?-i:[A-Z][\w-]*))", re.IGNORECASE),
)
# "Can Parcelo print packing slips with our logo?", "Can I ship live animals?", "can I dispute it?": what the
# asker wants to do (with something). Its object is often the knowledge base's everyday vocabulary ("Can we
# pay EUR invoices by SEPA?"), so it is only unsupported when most of its words are missing.
ASKED_ABILITY = re.compile(
    r"(?:^|[.,;!?]\s*)(?:can|could)\s+(?:i|we|you|they|customers?|(?-i:[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*))\s+"
    r"(?!(?:get|use|have|be|compare|tell|explain|help|see|find|do)\b)(?P<verb>[a-z]+)\s+"
    r"(?P<np>[^?.;]+)",
    re.IGNORECASE,
)
# The ability asked in other shapes, with the acted-on thing first: "Is shipping live animals allowed?" (the
# -ing verb and its object), "Can our logo be printed on packing slips?" (the passive's subject and the rest);
# or granted by a feature: "Does the Returns portal let my customers choose an exchange?" (what is acted on);
# or priced: "How much does it cost to add extra users?" (what the priced action acts on).
# The verb of an asked action, but one that only says how it is asked ("get", "use", "see" …).
_ACTING = r"(?!(?:get|use|have|be|see|do)\b)"
ASKED_ABILITY_TURNED = (
    re.compile(r"\b(?:how\s+much|what)\s+(?:does|do|will|would)\s+it\s+cost\s+(?:(?:me|us|them)\s+)?to\s+"
               + _ACTING + r"(?P<verb>[a-z]+)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
    re.compile(r"(?:^|[.,;!?]\s*)(?:does|do|can|will|would)\s+[^?.;]{1,40}?\s+(?:let|allow|enable)s?\s+"
               r"(?:me|us|them|(?:my|our|your|their|the)\s+[\w-]+)\s+(?:to\s+)?"
               + _ACTING + r"(?P<verb>[a-z]+)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
    re.compile(r"(?:^|[.,;!?]\s*)(?:is|are)\s+(?P<verb>[a-z]+ing)\s+(?P<np>[^?.;]+?)\s+(?:allowed|possible|"
               r"permitted|supported)\b", re.IGNORECASE),
    re.compile(r"(?:^|[.,;!?]\s*)(?:can|could)\s+(?:(?:the|an?|my|our|your|their)\s+)?(?P<np>[^?.;]+?)\s+be\s+"
               r"(?P<verb>[a-z]+(?:ed|en))\b(?P<rest>[^?.;]*)", re.IGNORECASE),
    # "Is it allowed to ship lithium batteries?"; "Can new hires e-sign their offer letters?" (the asker's
    # people as the subject, said by a plural noun).
    re.compile(r"(?:^|[.,;!?]\s*)(?:is|are)\s+it\s+(?:allowed|possible|permitted|ok|okay)\s+to\s+"
               + _ACTING + r"(?P<verb>[a-z][\w-]*)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
    re.compile(r"(?:^|[.,;!?]\s*)(?:can|could)\s+(?:(?:new|our|my|your|their|the|all)\s+)?[a-z]{3,}s\s+"
               + _ACTING + r"(?P<verb>[a-z][\w-]*)\s+(?P<np>[^?.;]+)", re.IGNORECASE),
)
# "What is Wagely's stock ticker?", "What's Acme's tax number?": an attribute asked of a named entity. Like an
# ability's object, it is only unsupported when most of its words are missing (the attribute ends at the first
# preposition: "… per draw", "… for Germany").
# Where an asked attribute ends: at the first preposition or the question's end.
_ATTRIBUTE_END = r"(?=\s+(?:of|for|in|on|at|per|with|after|before|from)\b|[?.;]|$)"
ASKED_ATTRIBUTE = re.compile(
    r"(?:^|[.,;!?]\s*)what(?:'s|\s+is|\s+are|\s+was)\s+(?-i:[A-Z][\w-]*)(?:'s|\u2019s)\s+"
    r"(?P<np>[^?.;]+?)" + _ATTRIBUTE_END,
    re.IGNORECASE,
)
# The provider asked to do something ("Does Wagely run background checks …?", "Do you verify street addresses
# …?") but with the offering verbs `ASKED_THING` reads: what it is asked to act on, often said partly in the
# knowledge base's words, so unsupported only when more than half of them are missing. It ends at the first
# preposition, as an attribute does ("street names for parcels going to France").
ASKED_PROVIDER_DOES = re.compile(
    r"(?:^|[.,;!?]\s*)(?:does|do|will|would)\s+(?:you|(?-i:[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*))\s+"
    r"(?!(?:" + _OFFERING + r"|get|use|be|see|do|need|want|know|let|allow|enable|keep|store|retain|hold|"
    r"charge|ask|cost|take|require)\b)(?P<verb>(?-i:[a-z][\w-]*))\s+"
    r"(?P<np>[^?.;]+?)" + _ATTRIBUTE_END,
    re.IGNORECASE,
)
# An attribute asked of the provider in other shapes: "What uptime percentage does Wagely commit to …?",
# "Which export formats do you support?", "How long does Parcelo keep the request logs of …?". Like an
# attribute, it is only unsupported when most of its words are missing; it ends at the first preposition.
ASKED_HELD = (
    re.compile(r"(?:^|[.,;!?]\s*)(?:what|which)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+"
               r"(?:does|do|did|will|would|can)\s+(?:you\b|(?-i:(?!I\b)[A-Z][\w-]*))", re.IGNORECASE),
    re.compile(r"\bhow\s+long\s+(?:does|do|will|would)\s+(?:you|(?-i:(?!I\b)[A-Z][\w-]*))\s+"
               r"(?:keep|store|retain|hold(?:\s+on\s+to)?|save|archive)\s+(?:the|an?|our|my|your|its)?\s*"
               r"(?P<np>[^?.;]+?)" + _ATTRIBUTE_END,
               re.IGNORECASE),
)
# Where the asked-about thing ends: a purpose or condition clause, or the asker's own situation.
_ASKED_END = re.compile(r"\s+(?:so|that|which|because|when|if|instead|since|while|to|as|where|we|i|you|they|"
                        r"on\s+(?:our|their|my))\b.*$", re.IGNORECASE)
# How many of a thing is asked ("lots of labels", "several invoices"): a quantity, not what the thing is.
_QUANTIFIER = re.compile(r"\b(?:(?:a\s+)?(?:lots?|loads?|plenty|bunch|couple|number)\s+of|many|several|"
                         r"multiple|various|numerous|few)\b", re.IGNORECASE)
# Words that qualify any feature and so say nothing about whether the knowledge base has it.
_VAGUE = frozenset(
    [
        "official",
        "native",
        "new",
        "current",
        "own",
        "real",
        "proper",
        "good",
        "simple",
        "easy",
        "possible",
        "available",
        "way",
        "option",
        "options",
        "app",
        "apps",
        "thing",
        "things",
        "kind",
        "type",
        "support",
        "vs",
        "versus",
        "any",
        "also",
        "still",
    ]
)


def asked_terms(question: str, patterns: Sequence[re.Pattern[str]] = ASKED_THING) -> list[str]:
    """The content words naming what an existence, offer or price question asks about (`ASKED_THING`),
    or with `patterns=(ASKED_ABILITY,)` what a "can I …" question wants to act on."""
    out: list[str] = []
    for pattern in patterns:
        for match in pattern.finditer(question):
            rest = match.group("rest") if "rest" in pattern.groupindex else ""
            phrase = _QUANTIFIER.sub(" ", _ASKED_END.sub("", f"{match.group('np')}{rest}"))
            if "verb" in pattern.groupindex and not content_words(phrase):
                phrase = match.group("verb")  # "can I dispute it?": the action is what is asked about
            for word in content_words(phrase):
                if any(word != other and word in other.split("-") for other in out):
                    continue  # a part of a hyphenated word already taken ("premise" of "on-premise")
                if word not in _VAGUE and word not in out and not word[:1].isdigit() and len(word) > 2:
                    out.append(word)
    return out

