"""Telling social messages (greetings, thanks, apologies, acknowledgements, sign-offs, "are you a bot?")
from information requests, so that "Hi there, thanks for the help yesterday!" is answered without retrieval.

A message is social when every information-bearing part of it is a social phrase, or when it asks nothing,
reports no problem and holds at least one social phrase ("Sorry for the late reply, I was on holiday").
"""

from __future__ import annotations

import re

from investigation.text import content_words

_PHRASES = [
    # greetings
    r"(hi+|hello+|hey+|hiya|howdy|yo|greetings|good\s+(morning|afternoon|evening|day)|dear\s+(team|support|all))",
    # thanks and appreciation, with what they are for
    (
        r"((many|big|huge)\s+)?(thanks?|thank\s+you|thx|ty|tyvm|cheers|kudos)(\s+(you|again|a\s+lot|a\s+bunch|so\s+much|"
        r"very\s+much|loads|heaps|a\s+million))*(\s+(for|about)\s+[^.!?,;]*)?"
    ),
    (
        r"((i|we)\s+)?(really\s+|much\s+|truly\s+)?appreciated?(\s+(it|that|this|you(r\s+\w+)?|the\s+[\w\s-]{0,30}?))?"
        r"(\s+(for|about)\s+[^.!?,;]*)?"
    ),
    r"much\s+appreciated|you('re|\s+are)\s+(awesome|great|amazing|the\s+best|a\s+star|a\s+lifesaver)",
    # apologies
    r"(sorry|apologies|(i|we)\s+apologi[sz]e)(\s+(for|about)\s+[^.!?,;]*)?",
    # acknowledgements and resolution
    (
        r"(ok(ay)?|k|cool|great|nice|awesome|perfect|excellent|brilliant|wonderful|lovely|super|sweet|good|fine|"
        r"got\s+it|sounds\s+good|will\s+do|noted|understood|all\s+good(\s+now)?|no\s+worries|fair\s+enough|"
        r"makes\s+sense|great\s+news|good\s+to\s+know)"
    ),
    (
        r"(that|this|it|which|your\s+\w+)\s+(fixed|solved|resolved|sorted|worked|did\s+the\s+trick|helped)(\s+(it|things|"
        r"the\s+\w+|everything))?(\s+(for\s+us|for\s+me))?"
    ),
    r"(it('s|\s+is)|everything('s|\s+is)|all('s|\s+is))\s+(working|fine|good)(\s+(again|now))*",
    # sign-offs and closing the ticket
    (
        r"(bye|goodbye|see\s+you(\s+(later|soon))?|talk\s+soon|take\s+care|speak\s+soon|best\s+regards|regards|"
        r"have\s+a\s+(nice|good|great|lovely)\s+(day|one|weekend|evening|week))"
    ),
    # a sign-off wishing the reader a time of rest, however worded ("enjoy your weekend", "enjoy the rest
    # of the day")
    (
        r"(have|enjoy)\s+(a|an|your|the)\s+((rest\s+of\s+(your|the)|nice|good|great|lovely|relaxing|restful)\s+)?"
        r"(day|weekend|evening|week|holidays?|vacation|break|time\s+off)"
    ),
    (
        r"((you|u)\s+(can|may)\s+|please\s+|feel\s+free\s+to\s+|go\s+ahead\s+and\s+)?(close|resolve)\s+(this|the|my|our)\s+"
        r"(ticket|case|issue|request|conversation)(\s+now)?"
    ),
    r"(that('s|\s+is)\s+all|nothing\s+else|no\s+more\s+questions)(\s+for\s+now)?",
    # about the assistant itself
    (
        # an adjective may qualify either side ("a real human or an automated bot?")
        r"(is\s+this|are\s+you|am\s+i\s+(talking|chatting|speaking)\s+(to|with))\s+(a\s+|an\s+)?((real|actual|live|automated)\s+)?"
        r"(bot|robot|human|person|ai|machine)(\s+or\s+(a\s+|an\s+)?((real|actual|live|automated)\s+)?"
        r"(bot|robot|human|person|ai|machine))?"
    ),
    r"(is\s+)?(any(one|body)|someone|somebody)\s+(there|here|around|available|home)",
    (
        r"(who|what)\s+are\s+you|what\s+can\s+you\s+do|how\s+are\s+you(\s+(doing|today))*|how('s|\s+is)\s+it\s+going|"
        r"what('s|\s+is)\s+up|nice\s+to\s+meet\s+you|how\s+have\s+you\s+been|"
        r"how('s|\s+is|\s+was)\s+(your|the)\s+(day|week|weekend|morning)(\s+going)?"
    ),
]
_SOCIAL = re.compile(r"(?<![\w-])(" + "|".join(_PHRASES) + r")(?![\w-])", re.IGNORECASE)
_FILLER = frozenset(
    [
        "team",
        "guys",
        "folks",
        "everyone",
        "everybody",
        "all",
        "again",
        "sleuth",
        "bot",
        "please",
        "lot",
        "much",
        "so",
        "really",
        "very",
        "now",
        "there",
        "here",
        "yes",
        "yeah",
        "yep",
        "oh",
        "ah",
        "well",
        "just",
        "also",
        "today",
        "yesterday",
        "again",
        "mate",
        "friend",
        "sir",
        "madam",
        "hi",
        "btw",
    ]
)
_PROBLEM = re.compile(
    r"\b([A-Z]{2,}[_-]?\d{2,}|error|errors|fail(s|ed|ing|ure)?|broken|bug|crash\w*|outage|down|wrong|issue|problem|"
    r"can'?t|cannot|unable|doesn'?t|isn'?t|won'?t|not\s+work\w*|stopp?ed|missing|charged|refund|cancel\w*)\b",
    re.IGNORECASE,
)
_ASKING = re.compile(
    r"\?|^\s*(what|how|when|where|why|which|who|whom|whose|can|could|do|does|did|is|are|was|were|will|would|should|"
    r"shall|may|might|must|have|has)\b|\b(please\s+(tell|explain|help|send|check|confirm|let)|(i|we)\s+(need|want|would\s+like|"
    r"'d\s+like)|how\s+(do|can|to)|tell\s+me|let\s+me\s+know)\b",
    re.IGNORECASE,
)
_PARTS = re.compile(r"[.!?;]+|,\s*|\s+-\s+")


def _residue(text: str) -> list[str]:
    """Content words left once social phrases and filler are removed."""
    return [w for w in content_words(_SOCIAL.sub(" ", text)) if w not in _FILLER]


def is_social(message: str) -> bool:
    """True for greetings, thanks, apologies, acknowledgements, sign-offs and questions about the
    assistant."""
    text = message.strip()
    if not text or not re.search(r"\w", text):
        return bool(text)  # ":)" or "!!" — nothing to look up
    if not _SOCIAL.search(text):
        return False
    if not _residue(text):
        return True
    # Something is left: social only if nothing is asked and no problem is reported.
    parts = [p for p in _PARTS.split(text) if p and p.strip()]
    asking = [p for p in parts if _ASKING.search(p) and _residue(p)] or (
        ["?"] if "?" in text and _residue(text.split("?")[0]) else [])
    return not asking and not _PROBLEM.search(text)
