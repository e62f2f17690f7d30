"""The end of a multi-hop chain among the picked sentences of an extractive answer: the sentence of a named
passage that a picked sentence names, or a sentence that mentions a name the picked sentences introduce, which
says what the asking clause asks ("M. Ward is … from Portland, Oregon" after "… album by M. Ward")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.kinds import typed_near
from investigation.text import NAME_CONNECTORS, capitalised_spans, fold

_FOCUS_WEIGHT = 4.0  # the asking clause's terms weigh this much more in what a chain's end must cover


@dataclass(frozen=True)
class Sentence:
    """One quotable sentence of the evidence, as synthesis scores it."""

    index: int  # evidence index
    position: int
    text: str
    stems: frozenset[str]
    weight: float  # grade weight of its evidence
    prior: float  # evidence rank and score


@dataclass(frozen=True)
class ChainContext:
    """What a chain's end is judged against: the question and the evidence titles, by index."""

    question_text: str  # folded question
    titles: tuple[str, ...]  # folded base titles
    named: tuple[bool, ...]  # the title is a proper name
    focus: frozenset[str]  # stems of the asking clause
    asked: frozenset[str]  # stems of the asking sentence


def is_name(title: str) -> bool:
    """A title that is a proper name ("M. Ward", "Philadelphia Eagles", "Always (2011 film)"): every word but
    the connectors is capitalised (or a number); a topic title ("Batch label printing") is not."""
    bare = re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()
    tokens = [w for w in re.findall(r"[^\W_][\w'’.-]*", bare) if fold(w) not in NAME_CONNECTORS]
    return bool(tokens) and all(w[0].isupper() or w[0].isdigit() for w in tokens)


def named_in(text: str, title: str) -> bool:
    """The folded `text` names the folded `title` as a whole name ("m. ward" in "by m. ward.")."""
    if len(title) < 3:
        return False
    # Every occurrence, overlapping ones too, with no word character (`\w`: alphanumeric or "_") either side.
    at = text.find(title)
    while at >= 0:
        end = at + len(title)
        if not (at > 0 and _word_char(text[at - 1])) and not (end < len(text) and _word_char(text[end])):
            return True
        at = text.find(title, at + 1)
    return False


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def chain_end(picked: Sequence[Sentence], candidates: Sequence[Sentence], state: ChainContext,
              kind: re.Pattern[str] | None, terms: dict[str, float]) -> Sentence | None:
    """The sentence at the end of a multi-hop chain: in a passage whose title a picked sentence of another
    passage names (and the question does not), the one that holds the asked kind of value and covers what
    the naming sentence leaves open ("M. Ward is … from Portland, Oregon" after "… album by M. Ward")."""
    best: tuple[tuple[bool, bool, float, int, int], Sentence] | None = None
    # Names the picked sentences introduce (not the question's): a sentence elsewhere that mentions one and
    # says what the asking clause asks continues the chain too ("Hall, who was the first president of the
    # American Psychological Association" after "… published by the American Psychological Association").
    bridges = {p.index: [n for n in (fold(x) for x in capitalised_spans(p.text))
                         if len(n) >= 4 and n not in state.question_text and n not in state.titles[p.index]]
               for p in picked}
    for c in candidates:
        title = state.titles[c.index] if c.index < len(state.titles) else ""
        by_title = len(title) >= 3 and not named_in(state.question_text, title) and state.named[c.index]
        text = fold(c.text)
        namers = [p for p in picked if p.index != c.index and (
            (by_title and named_in(fold(p.text), title))
            or (state.focus & c.stems and any(named_in(text, n) for n in bridges.get(p.index, []))))]
        if not namers:
            continue
        said = set().union(*(p.stems for p in namers))
        open_terms = {
            t: w * (_FOCUS_WEIGHT if t in state.focus else 1.0) for t, w in terms.items() if t not in said
        }
        total = sum(open_terms.values()) or 1.0
        cover = sum(w for t, w in open_terms.items() if t in c.stems) / total
        typed = kind is not None and bool(kind.search(c.text))
        if not typed and cover <= 0 and c.position > 0:
            continue
        lead_named = 0.1 if picked and namers[0] is picked[0] else 0.0
        score = round(cover + (0.1 if c.position == 0 else 0.0) + lead_named + 0.05 * c.weight, 6)
        key = (typed, typed and typed_near(c.text, kind, set(state.asked)), score, -c.index, -c.position)
        if best is None or key > best[0]:
            best = (key, c)
    return best[1] if best else None
