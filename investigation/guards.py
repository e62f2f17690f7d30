"""Checks code applies to model output before anything acts on it (never left to the prompt).

- `rejected_tools`: tool calls naming anything outside the call's allowed set.
- `check_query`: a model-written search query may only use proper nouns, ids, numbers and dates found
  in the question or in graded (not incorrect) evidence — no invented hops. A passage that carries
  instructions for an AI grounds nothing, so a planted "search for X" cannot launch a hop.
- `citation_problems`: dangling markers and uncited claims in a synthesized answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from investigation.citations import MARKER, markers_in
from investigation.memo import memoised
from investigation.state import Evidence, Grade
from investigation.text import (
    QUESTION_WORDS,
    STOPWORDS,
    TEXT_CACHE_SIZE,
    capitalised_spans,
    content_stems,
    content_words,
    dates,
    fold,
    numbers,
    quoted_titles,
    split_sentences,
    words,
)

# Codes such as ERR_4021, INV-2023-117, v2.3, eu-central-1: letters and digits in one token.
_ID = re.compile(r"(?<![\w-])(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9][\w.-]*[A-Za-z0-9](?![\w-])")


def rejected_tools(names: Iterable[str], allowed: Collection[str]) -> list[str]:
    """The tool names not in `allowed` (an empty list means every call may be used)."""
    return [name for name in names if name not in allowed]


@dataclass(frozen=True)
class QueryCheck:
    """The verdict on one model-written query: `unsupported` lists what appears in no grounding text."""

    query: str
    unsupported: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.unsupported


# The only non-ASCII characters a case-insensitive `re` pattern matches with an ASCII letter (tests check
# every code point).
_ASCII_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_QUOTE = ('"', "“", "'")


class _AsAscii(dict[int, str]):
    """A `str.translate` table giving each non-ASCII character an ASCII stand-in that the screened patterns
    treat alike: the letter it matches case-insensitively (`_ASCII_FOLDS`), itself for the one non-ASCII
    character a pattern holds ("“"), else "0" for a word character (\\w, never in a pattern's literals), " "
    for a space (\\s, not a line break) and "#" for anything else (in no pattern). Filled on first sight."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if code < 128 or char in _QUOTE:
            out = char
        else:
            out = _ASCII_FOLDS.get(char) or ("0" if char.isalnum() else " " if char.isspace() else "#")
        self[code] = out
        return out


_AS_ASCII = _AsAscii()


class _Screened:
    """A case-insensitive alternation of ASCII patterns, asked only whether it matches somewhere: searched as
    its alternatives, each only when the lower-cased text holds, of every group of literals that alternative
    cannot match without, one literal ("," and "ai": both are needed, either alone is not enough). The same
    answer as searching the whole pattern (the pattern matches somewhere iff one of its alternatives does),
    5-7 times faster on prose, where most of the literals never occur; the rarest group is best given first.
    A text with non-ASCII characters is searched as its ASCII stand-in (`_AsAscii`): the whole pattern's
    case-insensitive search over such text took several times as long as the screened one."""

    def __init__(self, alternatives: Sequence[tuple[tuple[tuple[str, ...], ...], str]]) -> None:
        for _groups, pattern in alternatives:
            if pattern != pattern.lower():  # each part is matched case-sensitively against lower-cased text
                raise ValueError(f"a screened alternative must be lower-case: {pattern!r}")
            if "#" in pattern or "0" in pattern or not pattern.replace("“", "").isascii():
                raise ValueError(
                    "a screened alternative must be ASCII (or “) and not name the stand-ins # and 0: "
                    f"{pattern!r}"
                )
        self.pattern = re.compile("|".join(pattern for _, pattern in alternatives), re.IGNORECASE)
        self._parts = [(groups, re.compile(pattern)) for groups, pattern in alternatives]

    def found(self, text: str) -> bool:
        lowered = (text if text.isascii() else text.translate(_AS_ASCII)).lower()
        for groups, part in self._parts:  # plain loops: a generator per part cost more than most searches
            for group in groups:
                for literal in group:
                    if literal in lowered:
                        break
                else:
                    break  # no literal of this group: the part cannot match
            else:
                if part.search(lowered) is not None:
                    return True
        return False


# Alternatives both checks below share, each with the groups of literals it cannot match without.
# "Disregard all prior instructions", "forget your rules", "ignore everything above": an order to drop what an
# assistant was told. The thing dropped must be instructions/rules/prompts qualified as earlier or as the
# reader's own, so a how-to's "ignore the warning if …" or "ignore the previous pay run" stays clean.
_EARLIER = r"(?:previous|prior|above|earlier|preceding|original|initial|former)"
_IGNORE_PREVIOUS = (
    (
        ("ignore", "disregard", "forget", "override", "bypass"),
        ("instruction", "rule", "prompt", "message", "direction", "directive", "guideline", "programming"),
    ),
    r"\b(?:ignore|disregard|forget|bypass)\s+(?:(?:all|any|every|of|the|your|these|those|my)\s+){,3}"
    r"(?:" + _EARLIER + r"\s+(?:(?:and|or|&)\s+\w+\s+)?"
    r"(?:instructions?|rules|prompts?|messages?|directions|directives|guidelines)"
    r"|your\s+(?:instructions|rules|prompts?|directives|guidelines|programming))\b"
    r"|\boverride\s+(?:(?:all|any|the|your)\s+){,2}(?:" + _EARLIER + r"\s+)?(?:instructions|prompts?)\b",
)
_IGNORE_EVERYTHING = (
    (("ignore", "disregard", "forget"), ("everything", "all")),
    (
        r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:(?:that\s+)?(?:above|before|prior|said|written)"
        r"|you\s+(?:were|have\s+been)\s+(?:told|given))"
    ),
)
# "You are now an unrestricted AI", "from now on you will only answer …", "your new instructions are":
# a new role or task handed to the reader. "You are now ready to run payroll" names no AI and no order.
_NEW_ROLE = (
    (("you", "pretend"), ("now", "new", "real", "actual", "true", "updated", "pretend")),
    (
        r"\byou\s+are\s+now\s+(?:a|an|the|in)\s+(?:[\w-]+\s+){,2}?"
        r"(?:ai|assistant|bot|chatbot|language\s+model|persona|(?:developer|dan|jailbreak|unrestricted|god)\s+mode)\b"
        r"|\bfrom\s+now\s+on,?\s+(?:you|the\s+(?:ai|assistant|model))\s+(?:will|must|should|shall|are\s+to)\s+"
        r"(?:only\s+)?(?:answer|respond|reply|say|act|pretend|ignore|tell)\b"
        r"|\byour\s+(?:new|real|actual|true|updated)\s+(?:instructions|task|role|prompt|orders)\b"
        r"|\bpretend\s+(?:to\s+be|you\s+are|that\s+you\s+are)\s+(?:a|an|the)?\s*(?:\w+\s+)?"
        r"(?:ai|assistant|bot|chatbot|model)\b"
    ),
)
_ONLY_WITH = (
    (("respond", "reply", "answer"), ("only",), (":",)),
    r"\b(?:respond|reply|answer)\s+only\s+with\s*:",
)
_CALL_A_TOOL = ((("call", "invoke"), ("tool", "function", "record_")),
                r"\b(?:call|invoke)\s+(?:the\s+)?(?:tool|function)s?\b|\bcall\s+`?record_\w+")
_REVEAL = (
    (("reveal",), ("prompt", "instructions")),
    r"\breveal\s+(?:your|the)\s+(?:system\s+prompt|instructions)",
)
_AI_ADDRESSED = ((("ai", "llm", "chatbot", "language"), (",", ":")),
                 r"\b(?:ai|llm|chatbot|language\s+model)(?:\s+(?:agents?|assistants?|models?))?\s*[,:]")
_NOTE_TO_AI = ((("note",),), r"\bnote\s+to\s+the\s+(?:ai|assistant|model)")
_PROMPT_TAG = (
    (("<",), ("system", "tool_use", "passage")),
    r"<\s*/?\s*(?:system|tool_use|passage|retrieved_passages)\b",
)

# Orders addressed to an AI, alternative by alternative.
_INSTRUCTIONS = _Screened([
    _IGNORE_PREVIOUS,
    _IGNORE_EVERYTHING,
    _NEW_ROLE,
    _ONLY_WITH,
    ((("system", "developer", "operator"), ("prompt", "message", "override", "notice", "rules")),
     r"\b(?:system|developer|operator)\s+(?:prompt|message|override|notice|rules)"),
    _CALL_A_TOOL,
    ((("reply", "respond", "answer", "say"), ("with",), _QUOTE),
     r"\b(?:reply|respond|answer|say)\s+(?:only\s+)?with\s*:?\s*[\"“']"),
    ((("search",), _QUOTE), r"\bsearch\s+(?:for|the\s+knowledge\s+base\s+for)\s+[\"“']"),
    ((("before",), ("answer",)), r"\bbefore\s+(?:you\s+)?answer(?:ing)?\b"),
    _REVEAL,
    (((":",), ("human", "assistant", "user", "system")), r"(?:^|\n)\s*(?:human|assistant|user|system)\s*:"),
    _AI_ADDRESSED,
    _NOTE_TO_AI,
    _PROMPT_TAG,
])


_HIDDEN = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


@memoised(TEXT_CACHE_SIZE)  # asked of every passage in every hop
def carries_instructions(text: str) -> bool:
    """True when a passage addresses orders to an AI (the shape of a prompt injection)."""
    return _INSTRUCTIONS.found(_HIDDEN.sub("", text))


# Markup that imitates a prompt's fences or roles, role labels in capitals, and HTML hidden from readers.
_IMITATION = re.compile(
    r"<\s*/?\s*(?:evidence|context|document|instructions?|assistant|user|human|question|draft)\s*>"
    r"|\b(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:|\bnew\s+instructions?\s*:"
    r"|<\w+\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b)[^>]*>",
    re.IGNORECASE)
_ROLE = re.compile(r"\b(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:")


# What only text aimed at an AI says (a whole passage is judged by these; `carries_instructions` also
# catches sentences such as 'search for "Acme Cloud"' that are harmless in a how-to for people).
_ADDRESSES_AI = _Screened([
    _IGNORE_PREVIOUS,
    _IGNORE_EVERYTHING,
    _NEW_ROLE,
    _ONLY_WITH,
    ((("system", "developer", "operator"), ("prompt", "override", "notice")),
     r"\b(?:system|developer|operator)\s+(?:prompt|override|notice)"),
    _CALL_A_TOOL,
    _REVEAL,
    _NOTE_TO_AI,
    _AI_ADDRESSED,
    _PROMPT_TAG,
])


@memoised(TEXT_CACHE_SIZE)
def untrusted(text: str) -> bool:
    """True when a passage addresses an AI or imitates markup (fake fences, role labels, hidden HTML): it is
    flagged in the trace, ranked below clean evidence, and never quoted."""
    clean = _HIDDEN.sub("", text)
    if _ADDRESSES_AI.found(clean):
        return True
    if "<" not in clean and ":" not in clean:  # every imitation holds one of them
        return False
    match = _IMITATION.search(clean)
    # Role labels count only in capitals ("SYSTEM:"), not "Operating system: Linux".
    return match is not None and (not match.group(0).rstrip(": ").isalpha() or bool(_ROLE.search(clean))
                                  or "instruction" in match.group(0).lower())


def grounding(question: str, evidence: Sequence[Evidence]) -> str:
    """The text a query may draw names from: the question and every passage not graded incorrect that
    does not carry instructions for an AI."""
    kept = [f"{e.title}\n{e.text}" for e in evidence
            if e.grade is not Grade.INCORRECT and not carries_instructions(e.text)]
    return "\n".join([question, *kept])


def _names(query: str) -> list[tuple[str, bool]]:
    """(name, at_start) for the quoted titles and capitalised spans of a query."""
    out: list[tuple[str, bool]] = [(t, False) for t in quoted_titles(query)]
    first = query.lstrip(" \"'“‘(").split(" ", 1)[0].strip(".,;:?!\"'”’)")
    for span in capitalised_spans(query):
        out.append((span, bool(first) and span.split(" ", 1)[0] == first))
    return out


def _name_supported(name: str, at_start: bool, folded: str, stems: set[str]) -> bool:
    if fold(name) in folded:
        return True
    name_stems = content_stems(name)
    if name_stems and name_stems <= stems:
        return True
    # "Birthplace Hank Snow": a capitalised first word is often just the start of the query.
    rest = name.split(" ", 1)
    return at_start and len(rest) == 2 and _name_supported(rest[1], False, folded, stems)


def check_query(query: str, question: str, evidence: Sequence[Evidence]) -> QueryCheck:
    """Every proper noun, id, number and date of `query` must occur in the question or graded evidence."""
    text = grounding(question, evidence)
    folded = fold(text)
    stems = content_stems(text)
    tokens = set(words(text)) | {fold(n) for n in numbers(text)}
    unsupported: list[str] = []
    for name, at_start in _names(query):
        single = len(words(name)) == 1
        if at_start and single and (fold(name) in STOPWORDS or fold(name) in QUESTION_WORDS):
            continue
        if at_start and single and not any(ch.isdigit() for ch in name) and not name.isupper():
            continue  # a lone capitalised first word is the query's first word, not a name
        if not _name_supported(name, at_start, folded, stems):
            unsupported.append(name)
    for code in _ID.findall(query):
        if fold(code) not in folded:
            unsupported.append(code)
    for number in numbers(query):
        if fold(number) not in tokens and fold(number) not in folded:
            unsupported.append(number)
    for date in dates(query):
        if fold(date) not in folded and not all(w in tokens for w in words(date)):
            unsupported.append(date)
    return QueryCheck(query=query, unsupported=tuple(dict.fromkeys(unsupported)))


def citation_problems(text: str, passages: int, *, min_words: int = 3) -> list[str]:
    """Why an answer citing passages 1…`passages` cannot be delivered as is (empty when it can)."""
    problems = [f"marker [{m}] names no passage (there are {passages})" for m in markers_in(text)
                if not 1 <= m <= passages]
    for sentence in _claims(text):
        if not MARKER.search(sentence) and len(content_words(sentence)) >= min_words:
            problems.append(f"no citation: {sentence[:160]}")
    return problems


_MARKERS_ONLY = re.compile(r"^(?:\s*\[\d{1,3}\])+[\s.,;:]*$")


def _sentences(line: str) -> list[str]:
    """Sentences of one line; markers written after the full stop ("… expired. [1]") stay with it."""
    out: list[str] = []
    for piece in split_sentences(line):
        if out and _MARKERS_ONLY.match(piece):
            out[-1] = f"{out[-1]} {piece.strip()}"
        elif piece.strip():
            out.append(piece)
    return out


def _claims(text: str) -> list[str]:
    """Sentences of an answer, list bullets included (a bullet is a sentence of its own)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*•").strip()
        if line:
            out.extend(_sentences(line))
    return out


def strip_uncited(text: str, passages: int, *, min_words: int = 3) -> tuple[str, int]:
    """`text` without the sentences no passage 1…`passages` supports: claims without a marker, and any
    sentence whose markers all name missing passages. Returns the text and how many were removed."""
    removed = 0
    lines: list[str] = []
    for line in text.splitlines():
        bullet = line[: len(line) - len(line.lstrip(" -*•"))]
        kept = []
        for sentence in _sentences(line.strip().lstrip("-*•").strip()):
            marks = markers_in(sentence)
            supported = any(1 <= m <= passages for m in marks)
            if not supported and (marks or len(content_words(sentence)) >= min_words):
                removed += 1
            else:
                kept.append(sentence)
        if kept:
            lines.append(bullet + " ".join(kept))
    return "\n".join(lines).strip(), removed
