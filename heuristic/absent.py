"""What a question asks that no passage mentions, beyond its names (`focus.missing_names`): the asked-about
words (`focus.missing_terms`) and the action a "can … do …" question asks.

In a knowledge base about one product every passage is on topic; a question whose asked thing no passage
names is answered, if at all, with a sentence about something next to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.focus import mentioning, missing_terms
from heuristic.siblings import value_only_for_peers
from investigation.state import Evidence
from investigation.text import ask_sentence, fold, stem

# What a "can <someone> <do> <something>" question asks is the action: "Can support reverse my pay run?",
# "Could an admin undo the import?", "Can employees tip each other?". An action no passage names is not
# answered by the passages about what it would be done to ("To change a locked pay run, contact support").
_ASKED_ACTION = re.compile(
    r"(?:^|[.,;!?]\s*)(?:can|could)\s+(?:(?:the|an?|my|our|your)\s+)?(?:[\w-]+\s+){1,2}?"
    r"(?:(?:still|also|ever|just|even|now)\s+)?(?P<verb>(?-i:[a-z]{3,}))\s+"
    r"(?:my|our|their|your|his|her|the|an?|this|that|these|those|it|them|all|every|each|one\s+another)\b",
    re.IGNORECASE,
)
# "How do we <do> <something>?" asks how the action is done ("How do we hand the Owner role over …?"): a
# passage telling how names the action too.
_HOW_ACTION = re.compile(
    r"\bhow\s+(?:do|can|could|should|would)\s+(?:i|we|you|they|one)\s+(?P<verb>(?-i:[a-z]{3,}))\s+"
    r"(?:my|our|their|your|the|an?|this|that|these|those|it|them)\b",
    re.IGNORECASE,
)
# The asker's people as the subject ("Can people sign in with …?", "Could our team export …?"): what they
# would do is asked as the asker would ask it ("Can we sign in with …?"), for `focus.missing_terms`.
_PEOPLE_SUBJECT = re.compile(r"\b(can|could)\s+(?:(?:our|my|your|the)\s+)?(?:team|people|staff|employees|"
                             r"users|members|admins|colleagues|workers)\b", re.IGNORECASE)
# Actions that say how something is asked, not what is done: "Can I get a refund?", "Can you compare …".
_LIGHT_VERBS = frozenset(["get", "use", "have", "make", "find", "help", "tell", "give", "take", "keep",
                          "know", "show", "send", "need", "want", "like", "please", "explain", "check",
                          "confirm", "also", "see", "ask", "pay", "let", "put", "set", "add", "run",
                          "compare", "list", "describe", "summarise", "summarize", "recommend", "suggest"])
# People and things in general: a knowledge base names them in its own word ("employees" for "staff", "a
# return" for "items"), so such a word missing from every passage says nothing about what is covered.
_PEOPLE = frozenset(["staff", "people", "employees", "workers", "team", "teams", "users", "members",
                     "colleagues", "personnel", "folks", "everyone", "anyone", "somebody", "someone",
                     "items", "things", "stuff"])
# Words that only say which kind of value is asked ("the trial period": a duration of the trial).
_VALUE_WORDS = frozenset(["period", "duration", "length", "amount", "number", "time", "times", "date",
                          "dates", "day", "days", "value", "figure", "total"])


def asked_missing(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The asked-about words no passage mentions (`focus.missing_terms`) but words for people in general
    ("Can we pay staff in Germany …?" over passages about employees) and for the kind of value asked ("Is
    there a trial period?"), else the asked action (`missing_action`). The asker's people as the subject
    ask as the asker would (`_PEOPLE_SUBJECT`: "Can people sign in with a fingerprint?"). Last, a name whose
    asked value the passages give only for its peers (`siblings.value_only_for_peers`)."""
    asked = _PEOPLE_SUBJECT.sub(lambda m: f"{m.group(1)} we", question)
    terms = [t for t in missing_terms(asked, evidence) if t not in _PEOPLE and t not in _VALUE_WORDS]
    return (terms or missing_action(question, evidence) or missing_role(question, evidence)
            or value_only_for_peers(question, evidence))


# "Who is the CEO of Parcelo?", "Who founded Wagely?": a person of the company the knowledge base is about,
# asked by their role or by what they did. Every passage names the company; the role or the deed is what a
# passage answering must name too.
_ASKED_ROLE = re.compile(
    r"\bwho\s+(?:is|was)\s+(?:the\s+)?(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:of|at)\s+"
    r"(?P<name>(?-i:[A-Z][\w-]*))\s*\?|\bwho\s+(?P<deed>founded|created|started|owns|built)\s+"
    r"(?P<owner>(?-i:[A-Z][\w-]*))\s*\?",
    re.IGNORECASE,
)


def missing_role(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The role or deed a "who is the <role> of <Company>?" / "who founded <Company>?" question asks (about
    the company most passages name, `_ASKED_ROLE`) when no passage mentions it; [] otherwise."""
    match = _ASKED_ROLE.search(question) if evidence else None
    if match is None:
        return []
    asked = fold(match.group("np") or match.group("deed"))
    name = match.group("name") or match.group("owner")
    if 2 * len(mentioning(name, evidence)) < len(evidence):
        return []  # not the knowledge base's own company: a world question, answered under other words
    return [] if any(mentioning(word, evidence) for word in asked.split()) else asked.split()


# Verbs of changing what was recorded, which a ticket and a knowledge base say in each other's words ("Can he
# fix the end time?" over "correct the end time"): one of them named by a passage names the action.
_CHANGING = frozenset(["fix", "correct", "edit", "change", "amend", "update", "modify", "adjust", "alter"])


def missing_action(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """The action a "can <someone> <do> <something>" or "how do we <do> <something>" question asks
    (`_ASKED_ACTION`: "reverse" in "Can support reverse my pay run?", `_HOW_ACTION`: "hand" in "How do we
    hand the Owner role over?") when no evidence passage mentions it (nor, for a verb of changing, another
    of `_CHANGING`); [] otherwise."""
    match = (_ASKED_ACTION.search(question) or _HOW_ACTION.search(question)) if evidence else None
    if match is None:
        return []
    verb = fold(match.group("verb"))
    said = _CHANGING if verb in _CHANGING else (verb,)
    if verb in _LIGHT_VERBS or verb in _PEOPLE or any(mentioning(v, evidence) for v in said):
        return []
    return [verb]


def asked_action(question: str) -> str | None:
    """The stem of the action a "can <someone> <do> <something>" asking sentence asks about ("download" in
    "Can I still download the PDF?"), but a verb that only says how it is asked ("get", "use"); else None."""
    match = _ASKED_ACTION.search(ask_sentence(question))
    verb = fold(match.group("verb")) if match else ""
    return stem(verb) if verb and verb not in _LIGHT_VERBS else None
