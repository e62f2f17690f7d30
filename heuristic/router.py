"""Routing a question from rules plus embedding similarity: direct, lookup, multi_part or multi_hop.

`out_of_corpus` is never decided here: whether the knowledge base holds the answer is only known after
retrieval, so refusal is the synthesis step's call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from heuristic.bridges import DESCRIPTION_CUES, bridge_depth, context_reference, has_bridge_cue
from heuristic.grader import Vectoriser
from heuristic.social import is_social
from investigation.ports import Embedder
from investigation.state import Route, RouteDecision
from investigation.text import STOPWORDS, capitalised_spans, content_words, fold, quoted_titles, words

# `bridge_depth`, `context_reference`, `has_bridge_cue`: in `heuristic.bridges`, importable from here too.
__all__ = ["RouterConfig", "bridge_depth", "chitchat_prototypes", "compared_entities", "context_reference",
           "has_bridge_cue", "route_question", "split_independent"]

_GREETING = re.compile(
    r"^\s*(hi+|hello+|hey+|hiya|howdy|yo|greetings|good\s+(morning|afternoon|evening|day)|"
    r"thanks?(\s+(you|a lot|so much|again))*|thank\s+you(\s+(so|very)\s+much)?|thx|ty|cheers|"
    r"bye|goodbye|see\s+you|ok(ay)?|cool|great|nice|awesome|perfect|got\s+it|sounds\s+good|"
    r"how\s+are\s+you(\s+doing)?|how's\s+it\s+going|what's\s+up|sup|who\s+are\s+you|"
    r"what\s+can\s+you\s+do|are\s+you\s+(a\s+)?(bot|human|there)|nice\s+to\s+meet\s+you|"
    r"have\s+a\s+(nice|good|great)\s+(day|one|weekend))\b[\s!.,?:;)(]*",
    re.IGNORECASE,
)
_CHITCHAT_PROTOTYPES = (
    "hello there", "hi, how are you today?", "thank you so much for your help", "thanks, that was helpful",
    "good morning", "have a nice day", "goodbye, see you later", "who are you?", "what can you do?",
    "you are awesome", "nice to meet you", "ok great", "how is it going?",
)
_FILLER = {
    "there",
    "team",
    "sleuth",
    "bot",
    "again",
    "guys",
    "folks",
    "everyone",
    "all",
    "please",
    "lot",
    "much",
}

# "Are X and Y both …", "Which is older, X or Y", "between X and Y", "X or Y?", "same …", "in common",
# "X vs Y", "compare X and Y", "on X and on Y" (the same property asked of each).
_COMPARISON = re.compile(
    r"(\bboth\b|\bneither\b|\beither\b|\bin common\b|\bthe same\b|\bsame\s+\w+|\bbetween\b.+\band\b|"
    r"\b(older|younger|oldest|youngest|earlier|later|first|larger|largest|smaller|bigger|longer|"
    r"shorter|taller|higher|lower|more|less|fewer|farther|further|closer|newer|better)\b.*\bor\b|"
    r",\s*(the\s+)?[\w\"“'][^,?]*\bor\b[^,?]+\?\s*$|(?<!\bthat\s)(?<!\bwhich\s)(?<!\bwho\s)\b(also|too)\b.*\?\s*$|\brespective(ly)?\b|"
    r"\bwhich\s+(one\s+)?(of\s+(them|the\s+two)\s+)?(was|is|were|are|came|had|has|did)\b|"
    r"\bvs\.?(?!\w)|\bversus\b|\bcompar(e|ed|es|ing|ison)\b|\bdifferences?\b|\bdiffer\b|"
    r"\b(on|for|in|at|with|from|under)\s+(the\s+)?[\w-]+(\s+[\w-]+)?,?\s+(and|or|vs\.?|versus)\s+"
    r"(on|for|in|at|with|from|under)\s|"
    # "Is X longer than Y?", "Did X or Y open first?": a comparative after the two names.
    r"\b(older|younger|earlier|later|larger|smaller|bigger|longer|shorter|taller|higher|lower|more|less|fewer|"
    r"newer|wider|deeper|heavier)\s+(\w+\s+)?than\b|"
    r"^\s*(did|was|is|were|are|does|do|has|had)\b[^?]*\bor\b[^?]*\b(first|earlier|later|older|younger|"
    r"longer|more|most|less|larger|smaller|bigger|further|farther|higher|lower|taller|shorter|closer|newer)\b|"
    # "Were the Rolling Stones formed before the Kinks?": which came first, asked as yes or no.
    r"^\s*(did|was|is|were|are|does|do|has|had)\b[^?]*\s(before|after)\s+(the\s+)?[A-Z\"“]|"
    # "What … do Team and Business each get?": the same thing asked of each name.
    r"\band\s+(the\s+)?[\w-]+(\s+[\w-]+)?\s+each\b)",
    re.IGNORECASE,
)
_CONJUNCTION = frozenset(["and", "or", "&", "vs", "vs.", "versus", "compared", "than", "nor"])
_INDEPENDENT_SPLIT = (
    r"(?:,?\s+and\s+|\?\s+|;\s*)(?=(?:who|what|when|where|which|how|why)\s+"
    r"(?:is|was|are|were|did|does|do|has|have|had|many|much|year|city|country)\b)"
)

# Kinds of things a question about the world describes instead of naming: people by role, works,
# organisations, places. "The author of X", "which band from Y", "X's coach", "a film starring Z" all point
# at such a thing, which must be found before what is asked of it can be. Attributes (price, limit, URL,
# population) are not kinds: "the price of X" is one lookup.
_KINDS = (
    r"(?:actor|actress|singer|songwriter|singer-songwriter|performer|director|filmmaker|author|writer|novelist|poet|"
    r"playwright|screenwriter|composer|lyricist|producer|creator|co-creator|founder|co-founder|owner|host|presenter|"
    r"coach|manager|player|footballer|quarterback|pitcher|captain|frontman|vocalist|guitarist|drummer|bassist|"
    r"rapper|musician|artist|painter|sculptor|architect|designer|inventor|scientist|politician|president|"
    r"minister|senator|governor|mayor|king|queen|prince|princess|emperor|ruler|chairman|husband|wife|spouse|"
    r"father|mother|son|daughter|brother|sister|sibling|grandson|granddaughter|grandfather|grandmother|uncle|"
    r"aunt|nephew|niece|teammate|successor|predecessor|namesake|character|protagonist|narrator|star|co-star|"
    r"mentor|pupil|student|teacher|professor|"
    r"film|movie|album|song|single|novel|book|series|sitcom|episode|opera|musical|poem|painting|franchise|"
    r"soundtrack|sequel|prequel|adaptation|magazine|newspaper|documentary|comedy|drama|thriller|"
    r"band|group|duo|trio|team|club|company|corporation|conglomerate|studio|network|broadcaster|university|"
    r"college|school|airline|brand|publisher|party|agency|league|"
    r"city|town|village|country|nation|state|province|county|birthplace|hometown|stadium|arena|venue|island|"
    r"river|mountain|airport|headquarters|district|borough)s?"
)
_PARTICIPLES = (
    r"(?:created|founded|co-founded|directed|written|produced|composed|released|recorded|formed|owned|designed|"
    r"developed|built|hosted|published|named|led|fronted|coached|managed|based|located|born|sung|performed|"
    r"played|starring|featuring|adapted|set|broadcast|aired|established)"
)
_KIND_CUES = (
    # A kind linked to a name: "The director of Inception", "the 1997 novel by Arundhati Roy".
    re.compile(
        r"\b(?i:the|a|an|its|his|her|their)\s+(?:[\w'’-]+\s+){0,3}"
        + _KINDS
        + r"\s+(?:of|by|from|behind|starring|featuring)\s+(?:(?i:the)\s+)?[A-Z0-9\"“]"
    ),
    # A kind qualified before it: "Which American film director", "What 1988 Telugu comedy", "which
    # rapper and producer from Compton", "which band that also included …", "which series created by …".
    re.compile(r"\b(?i:which|what)\s+(?:(?:\d{4}|[A-Z][\w-]+)\s+)+(?:[\w-]+\s+){0,3}" + _KINDS + r"\b"),
    re.compile(
        r"\b(?i:which|what)\s+(?:[\w-]+\s+){0,3}" + _KINDS + r"(?:(?:,|\s+and|,\s+and)\s+[\w-]+)*,?\s+"
        r"(?:from|who|whom|whose|that|which|where|with|" + _PARTICIPLES + r")\b"
    ),
    # A kind belonging to a name: "Serena Williams' first coach", "Madonna's first husband".
    re.compile(r"\b[A-Z][\w.-]*(?:['’]s|s['’])\s+(?:[a-z-]+\s+){0,2}" + _KINDS + r"\b"),
    # A kind described by a participle phrase around a name: "a 2014 animated film starring Chris Pratt",
    # "series created by Matt Groening".
    re.compile(
        r"\b" + _KINDS + r"\s+(?:[a-z]+\s+)?" + _PARTICIPLES + r"\s+(?:(?:by|in|at|on|after|for|with)\s+)?"
        r"(?:(?i:the|a|an)\s+)?[A-Z0-9\"“]"
    ),
    # A contact clause after a kind: "the state the Battle of Mine Creek was fought in".
    re.compile(
        r"\b(?i:the)\s+"
        + _KINDS
        + r"\s+(?:(?i:the)\s+)?[A-Z][\w'’.-]*(?:\s+(?:of|de|the|and|[A-Z][\w'’.-]*))*"
        r"\s+(?:is|was|were|are|has|had|did|does|[a-z]+ed)\b"
    ),
    # A name used as a description, at the start too: "The Grand Budapest Hotel director's previous film".
    re.compile(
        r"\b(?i:the)\s+(?:[A-Z\"“][\w'’\"”.-]*\s+)+(?:director|author|singer|creator|founder|producer|"
        r"writer|composer|band|performer|star|team|company)"
    ),
)

_ATTRIBUTES = (
    r"(?:price|prices|cost|costs|fee|fees|limit|limits|cap|quota|size|length|duration|amount|number|rate|"
    r"timeout|window|allowance|version|url|address|status|balance|discount|charge|deadline|date)"
)
# "What's the deadline for …" is "what is", not a possessive naming a role ("…'s performer").
_CONTRACTED = re.compile(r"\b(what|who|where|when|how|why|which|that|there|it|here)['’]s\b", re.IGNORECASE)

# Routing reads more kinds of description than the loop's depth estimate does: the stop rules were
# measured with the cues above, and a third hop only pays off for what those find.
_ROUTE_CUES = (
    DESCRIPTION_CUES[0],
    # "the X of the Y", unless X is a quantity or setting of Y ("the price of the Pro plan"): one lookup.
    re.compile(
        # Nor a verb after the noun ("what limit does the API have on the Growth plan?"): its own clause.
        r"\b(the|a|an|its|his|her|their)\s+(?!(?:\w+\s+){0,2}?" + _ATTRIBUTES + r"\s+(?:of|for|on|in)\b)"
        r"(?!(?:\w+\s+){0,1}(?:have|has|had|do|does|did|get|gets|offer|offers)\s)"
        r"(\w+\s+){0,2}(of|for|by|from|in|at|on|with)\s+(the|a|an|its|his|her|their)\s+\w+",
        re.IGNORECASE,
    ),
    *DESCRIPTION_CUES[2:],
    # (A quantity or setting of a named thing is looked up as one fact: "the price of Zorbo Shield".)
    re.compile(r"\bthe\s+(?!(?:[a-z]+\s+)?" + _ATTRIBUTES + r"\s+(?:of|for)\b)([a-z]+\s+){0,3}"
               r"(of|containing|for|by|with)\s+[A-Z\"“]"),
    # A noun described by a participle phrase: "the book named after the artist", "the country premiering X".
    re.compile(
        r"\bthe\s+[a-z]+\s+([a-z]{3,}ed|[a-z]{3,}ing)\s+((after|as|by|in|for|during|on|from)\s+(the|a|an)\b|"
        r"[A-Z])"
    ),
    # "the founder of the band Porcupine Tree": a role in something named.
    re.compile(r"\bthe\s+([a-z]+\s+){0,4}of\s+the\s+[a-z]+\s+[A-Z]"),
    # An appositive asking for a detail of the described thing: "How to Eat, released in which year, is …".
    re.compile(r",\s+([a-z]+ed|[a-z]+ing)\s+(in|by|on|at|from)\s+(which|what|whom?)\b", re.IGNORECASE),
    # "the same book as X", "in the same county as Y": what X shares must be found first.
    re.compile(r"\bthe\s+same\s+[a-z]+\s+as\b", re.IGNORECASE),
    # "… by a singer-songwriter from what state?", "worked with the mayor of what city?": the answer is an
    # attribute of someone or something to be found first.
    re.compile(
        r"\b(by|of|for|with|at|on|in|to)\s+(a|an|the)\s+([\w-]+\s+){0,3}(from|of|in|at|by|for|on)\s+"
        r"(what|which|whom?)\b",
        re.IGNORECASE,
    ),
    # An indefinite description with a relative clause: "published by a house that was founded in 2005".
    re.compile(
        r"\b(a|an|another)\s+([\w-]+\s+){0,4}(that|which|who|whose)\s+(\w+\s+)?(was|were|is|are|has|had|"
        r"originally|first|also|later|[a-z]+ed|[a-z]+s)\b",
        re.IGNORECASE,
    ),
    # A description by a participle: "a network founded by who", "a company headquartered in what city".
    re.compile(
        r"\b(a|an|the)\s+([\w-]+\s+){0,3}(founded|created|owned|headquartered|based|located|formed|"
        r"started|established|operated|broadcast|aired|produced|published|directed|written)\s+"
        r"(by|in|at|on)\s+(what|which|whom?)\b",
        re.IGNORECASE,
    ),
    # A contact clause around a name: "the city Kevin Durant played for", "the country Ceelmakoile is in".
    re.compile(
        r"\bthe\s+[a-z]+\s+(?:[A-Z][\w'’.-]*\s+)+(?:is|was|were|are|has|had|did|does|[a-z]+ed|played|"
        r"fought|won|lost|joined|left|made|wrote|sang|built|founded)\b"
    ),
    # A name used as a description: "the It'll Be Me singer", "the Titanic director".
    re.compile(
        r"\bthe\s+(?:[A-Z\"“][\w'’\"”.-]*\s+)+(singer|director|author|composer|creator|founder|owner|"
        r"producer|writer|band|performer|actor|actress|star|artist|team|company|network|label)\b"
    ),
    # An appositive description between commas: "X, known for Y, is …", "X, which aired in 2001, …".
    re.compile(r",\s+(known|best\s+known|famous|noted|who|which|whose)\b[^,?]{3,},\s+\w+", re.IGNORECASE),
    *_KIND_CUES,
)


@dataclass(frozen=True)
class RouterConfig:
    """Thresholds of the rule + embedding router."""

    chitchat_similarity: float = 0.62
    chitchat_max_words: int = 8


def _is_greeting_only(question: str) -> bool:
    rest = question
    while True:
        match = _GREETING.match(rest)
        if not match or match.end() == 0:
            break
        rest = rest[match.end():]
    if rest == question:
        return False
    remaining = [w for w in content_words(rest) if w not in _FILLER]
    return not remaining


def chitchat_prototypes(embedder: Embedder) -> np.ndarray:
    """The chit-chat prototypes' unit vectors (rows), one text per call: the embedder keeps them (its
    caches), and a single text runs on its query session, so a process that only answers questions never
    loads the batch session for them (asking the question with the prototypes at once would load it in the
    middle of an investigation). Bit for bit the vectors of one batch."""
    return np.asarray([embedder.embed([text])[0] for text in _CHITCHAT_PROTOTYPES], dtype=np.float32)


def _cosine_max(
    embedder: Embedder, text: str, vectorise: Vectoriser | None, prototypes: np.ndarray | None
) -> float:
    # The question through `vectorise` when given (the reasoner's: kept out of the embedder's on-disk cache,
    # which must not grow with every question), the prototypes as given or through the embedder.
    question = vectorise([text])[0] if vectorise is not None else embedder.embed([text])[0]
    if prototypes is None:
        prototypes = chitchat_prototypes(embedder)
    return float(np.max(prototypes @ np.asarray(question, dtype=np.float32)))


def compared_entities(question: str) -> list[str]:
    """The entities a comparison question compares ("Are X and Y both…" → [X, Y]), in order."""
    spans = [*quoted_titles(question), *capitalised_spans(question), *_symbol_names(question)]
    folded_q = fold(question)
    positioned: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for span in spans:
        key = fold(span)
        start = folded_q.find(key)
        if start < 0 or any(a <= start < b for a, b in taken):
            continue
        taken.append((start, start + len(key)))
        positioned.append((start, span))
    positioned.sort()
    # Pairs joined by a coordinating conjunction ("X and Y", "X or Y", "X, or the Y").
    for (s1, e1), (s2, e2) in pairwise(positioned):
        if _joined(folded_q[s1 + len(fold(e1)): s2]):
            return [e1, e2]
    if not re.search(r"\b(also|too)\b", question, re.IGNORECASE):
        return []
    # "X has an OBE. Does Y also have one?": the multi-word names, when there are exactly two or three.
    names = [span for _, span in positioned if len(span.split()) >= 2]
    return names if 2 <= len(names) <= 3 else []


# Comparison and intersection questions: a name written in lower case with a symbol in it, right after the
# kind of thing it is ("the band f(x)", "the rapper will.i.am"), is a name like a capitalised one.
_SYMBOL_NAME = re.compile(r"\b" + _KINDS + r"\s+((?=[a-z0-9][^\s,;?]*[().&!+$])[a-z0-9][^\s,;?]*[^\s,;?.!])")


def _symbol_names(question: str) -> list[str]:
    """Names written in lower case with a symbol, after the kind of thing they name ("the band f(x)")."""
    return [m.group(m.lastindex or 0) for m in _SYMBOL_NAME.finditer(question)]


def _joined(between: str) -> bool:
    """True when the text between two names coordinates them: "and", "or the", "vs", "and on", "compared to",
    "and one in the" — a conjunction with only function words around it."""
    if re.fullmatch(r"[\s,\"“”']*(,?\s*(and|or|&|vs\.?|versus)\s+(the\s+\w+\s+(of\s+)?)?(the\s+)?)[\s\"“”']*",
                    between):
        return True
    if re.fullmatch(
        r"[\s,\"“”']*((is|was|are|were)\s+)?([a-z]+er|more\s+[a-z]+|less\s+[a-z]+)\s+than\s+(the\s+)?"
        r"[\s\"“”']*",
        between,
    ):
        return True  # "X longer than the Y"
    if re.fullmatch(r"[\s,\"“”']*([a-z]+\s+){1,2}(before|after)\s+(the\s+)?[\s\"“”']*", between):
        return True  # "X formed before the Y"
    tokens = re.findall(r"[\w&.]+", between)
    return (0 < len(tokens) <= 5 and any(t in _CONJUNCTION for t in tokens)
            and all(t in _CONJUNCTION or t in STOPWORDS or t in ("to", "with") for t in tokens)
            and not re.search(r"[.?!;:]", between))


def route_question(question: str, embedder: Embedder | None = None,
                   config: RouterConfig = RouterConfig(), *, vectorise: Vectoriser | None = None,
                   prototypes: np.ndarray | None = None) -> RouteDecision:
    """Route by rules first; embedding similarity to chit-chat prototypes catches the rest (`vectorise`:
    how the question itself is embedded, the embedder's `embed` by default; `prototypes`: their vectors
    as `chitchat_prototypes` gives them, computed by default)."""
    text = question.strip()
    if not text or _is_greeting_only(text) or is_social(text):
        return RouteDecision(route=Route.DIRECT, reason="greeting or chit-chat: no retrieval needed")
    question_words = words(text)
    has_names = bool(capitalised_spans(text) or quoted_titles(text))
    if embedder is not None and not has_names and len(question_words) <= config.chitchat_max_words:
        similarity = _cosine_max(embedder, text, vectorise, prototypes)
        if similarity >= config.chitchat_similarity:
            return RouteDecision(route=Route.DIRECT, reason=f"chit-chat (similarity {similarity:.2f})",
                                 confidence=min(1.0, similarity))
    if _COMPARISON.search(text) and len(compared_entities(text)) >= 2:
        return RouteDecision(route=Route.MULTI_PART, reason="comparison of several entities", confidence=0.8)
    if len(split_independent(text)) >= 2:
        return RouteDecision(route=Route.MULTI_PART, reason="conjunction of independent questions",
                             confidence=0.7)
    cues = sum(1 for cue in _ROUTE_CUES if cue.search(_CONTRACTED.sub(r"\1 is", text)))
    context = context_reference(text)
    if context and not cues:
        return RouteDecision(route=Route.MULTI_HOP, reason=f"the question depends on its context ({context})",
                             confidence=0.6)
    if cues:
        return RouteDecision(route=Route.MULTI_HOP, reason=f"bridge description to resolve ({cues} cue(s))",
                             confidence=min(1.0, 0.55 + 0.15 * cues))
    return RouteDecision(route=Route.LOOKUP, reason="single fact lookup", confidence=0.6)


def split_independent(question: str) -> list[str]:
    """Split "What is X and who founded Y?" into its independent questions (each with ≥2 content words)."""
    parts = re.split(_INDEPENDENT_SPLIT, question.strip(), flags=re.IGNORECASE)
    cleaned = [p.strip(" ,;") for p in parts if p.strip(" ,;")]
    cleaned = [p if p.endswith("?") else p + "?" for p in cleaned]
    return cleaned if all(len(content_words(p)) >= 2 for p in cleaned) else [question]
