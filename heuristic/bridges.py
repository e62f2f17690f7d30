"""Whether a question must resolve something before it can be answered: a description to resolve first
("the film that …", "X's performer", `bridge_depth` counts how many nest), or a ticket's situation the
question points back at (`context_reference`). The router (`heuristic.router`) and the sufficiency check
(`heuristic.sufficiency`) read these.
"""

from __future__ import annotations

import re

from investigation.text import content_words

# Bridge cues: a description that must be resolved before the question can be ("the film that…",
# "the state where X's performer died", "the director of the film …", "X's performer").
DESCRIPTION_CUES = (
    re.compile(r"\bthe\s+(\w+\s+){0,3}(that|which|who|whom|whose|where|when)\b", re.IGNORECASE),
    re.compile(r"\b(the|a|an|its|his|her|their)\s+(\w+\s+){0,2}(of|for|by|from|in|at|on|with)\s+"
               r"(the|a|an|its|his|her|their)\s+\w+", re.IGNORECASE),
    re.compile(r"\w['’]s\s+(\w+\s+){0,2}(performer|director|author|composer|creator|founder|owner|"
               r"producer|writer|singer|band|father|mother|wife|husband|spouse|son|daughter|child|"
               r"sibling|brother|sister|team|country|city|state|birthplace|capital|home|alma mater|"
               r"employer|label|publisher|developer|manufacturer|parent|successor|predecessor|"
               r"headquarters|leader|president|member|architect|designer|inventor|star|actor|actress|"
               r"[a-z]+er|[a-z]+or)\b", re.IGNORECASE),
    re.compile(r"\b(born|died|located|founded|formed|based|headquartered|released|published|"
               r"directed|written|produced|performed|created|played|starred|named)\s+(in|by|at|on|after)\s+"
               r"(the|a|an)\s+\w+\s+(that|which|who|where|whose)\b", re.IGNORECASE),
)
_BRIDGE_CUES = (
    *DESCRIPTION_CUES,
    re.compile(r"\bthe\s+([a-z]+\s+){0,2}(of|containing|for|by|with)\s+[A-Z\"“]"),
    # "… by a singer-songwriter from what state?": the answer is an attribute of someone to be found first.
    re.compile(
        r"\b(by|of|for|with|at)\s+(a|an)\s+([\w-]+\s+){0,3}(from|of|in|at|by|for)\s+(what|which)\s+\w+",
        re.IGNORECASE,
    ),
)

_IDENTIFIER = re.compile(r"\b[A-Z]{2,}[_-]?\d{3,}\b")
_MEANING = re.compile(r"\b(mean|means|meaning|stand\s+for|stands\s+for|definition)\b", re.IGNORECASE)
_CLAUSES = re.compile(
    r"(?<=[.!?])\s+|[,;:]\s+(?=(?:so\s+)?(?:what|how|when|where|why|which|who|can|could|do|does|"
    r"is|are|will|would|should)\b)|\s+-\s+",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"\?|^\s*(what|how|when|where|why|which|who|whom|whose|can|could|do|does|did|is|are|will|would|"
    r"should)\b",
    re.IGNORECASE,
)
_ANAPHOR = re.compile(
    r"\b(that|this|these|those|it|she|he|they|them|her|him)\b|(?<!\bis\s)(?<!\bare\s)\bthere\b"
    r"|\bthe\s+(\w+\s+){0,2}(we|i|you|they)\s+(need|want|use|have|get|should)\b"
    r"|\b(which|what)\s+\w+\s+(do|does|would|will|should)\s+(we|i|they)\s+need\b",
    re.IGNORECASE,
)


def context_reference(question: str) -> str:
    """Why a ticket's question depends on the situation it describes first ("We moved to AP-1 and get
    ERR_4033. Which URL …?", "… Montreal. Does that …"), or "" when it does not.

    An identifier (an error code) that the question does not merely ask the meaning of, or a question
    that points back ("that", "there", "the plan we need") at an earlier statement.
    """
    if _IDENTIFIER.search(question) and not _MEANING.search(question):
        return "an error code to trace"
    clauses = [c.strip() for c in _CLAUSES.split(question) if c and c.strip()]
    for i, clause in enumerate(clauses):
        if _ASKS.search(clause):
            before = " ".join(clauses[:i])
            if len(content_words(before)) >= 3 and _ANAPHOR.search(clause):
                return "the question refers back to the situation described"
            return ""
    return ""


def bridge_depth(question: str) -> int:
    """How many descriptions a question nests ("the state where Hello Love's performer died" → 2): an
    estimate of the hops a chain needs beyond the first."""
    spans: set[tuple[int, int]] = set()
    for cue in _BRIDGE_CUES:
        for match in cue.finditer(question):
            if not any(a <= match.start() < b for a, b in spans):
                spans.add(match.span())
    return len(spans)


def has_bridge_cue(question: str) -> bool:
    """True when the question holds a description to resolve first ("the film that…", "X's performer")."""
    return any(cue.search(question) for cue in _BRIDGE_CUES)

