"""Extractive synthesis: a short answer (the 2–4 sentences of the selected evidence that best answer the
question, markdown turned into plain sentences, each cited), or a refusal when no evidence supports it.

Sentences are chosen greedily by what they add: question terms not yet covered (names and numbers count
double), the kind of answer the question asks for (a duration for "how long", a price for "how much does …
cost"), the evidence's grade, and for comparisons one sentence per compared entity first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.focus import focus_names
from heuristic.grader import weighted_terms
from heuristic.planner import base_title
from heuristic.prose import units, with_context
from heuristic.router import compared_entities
from heuristic.sufficiency import has_support, unsupported_names
from heuristic.verdicts import both_verdict, is_yes_no, temporal_winner
from investigation.answers import refusal
from investigation.citations import cite
from investigation.guards import carries_instructions
from investigation.state import Answer, Evidence, Grade, Route, RouteDecision
from investigation.text import NAME_CONNECTORS, STOPWORDS, ask_sentence, capitalised_spans, fold, stem, words
from investigation.text import content_stems as _content_stems

DIRECT_REPLY = ("Hello! I'm Sleuth. Ask me a question about your knowledge base and I will investigate it "
                "and answer with citations.")
_THANKS_REPLY = "You're welcome! Ask me anything else about your knowledge base whenever you need."
_SORRY_REPLY = "No problem at all! Ask me anything about your knowledge base whenever you are ready."
_BOT_REPLY = ("I'm Sleuth, an automated assistant. Ask me a question about your knowledge base and I will "
              "investigate it and answer with citations.")
_BYE_REPLY = "You're welcome, glad it helped! Have a good one, and ask me anything whenever you need."
_DURATION = re.compile(r"\b\d[\d,.]*\s*(-|to\s+\d+\s*)?(business\s+|calendar\s+|working\s+)?"
                       r"(seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)
# Month names; "may" only as "May" (the modal verb "may approve" is no date).
_MONTH = (r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b|"
          r"(?-i:\bMay\b)")
_MEASURE = re.compile(r"\b(?:population|attendance|capacity|enrollment|elevation|height|area)\b", re.IGNORECASE)
_PLACE_ASKED = re.compile(r"(?:^|[.?!;,]\s*|\band\s+)where\b|\b(?:what|which)\s+(?:[a-z]+\s+)?(?:city|town|state|country|county|province|"
                          r"region|island|village|nation|continent|borough|district|location)\b", re.IGNORECASE)
# A place as prose names it: "in Columbus", "from Portland, Oregon", "at Fort Worth" (case matters here).
_PLACE = re.compile(r"\b(?:in|at|from|near)\s+(?:the\s+)?[A-Z][\w'-]+|\b[A-Z][\w'-]+,\s+[A-Z][\w'-]+|→|\bsettings\b")
_ANSWER_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"\bhow\s+(long|soon|many\s+(days|hours|minutes|weeks|months|years))\b|\buntil\s+when\b|"
                r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w-]+\s+){0,3}(?:timeout|retention(?:\s+period)?|lifetime|"
                r"duration|grace\s+period|trial(?:\s+period)?)\b", re.IGNORECASE), _DURATION),
    # "By when must …": a deadline is a date or a time from an event ("within 30 days after …").
    (re.compile(r"\bby\s+when\b|\bdeadline\b|\bhow\s+late\b", re.IGNORECASE),
     re.compile(_DURATION.pattern + r"|\b(1[0-9]{3}|20[0-9]{2})\b|" + _MONTH, re.IGNORECASE)),
    (re.compile(r"\bhow\s+much\b.*\b(cost|price|charge|pay|fee)|\b(cost|price|fee|charge)s?\b.*\?|\bhow\s+much\s+is\b", re.IGNORECASE),
     re.compile(r"[$€£]\s?\d|\b\d[\d,.]*\s*(usd|eur|gbp|dollars?|euros?)\b|\bfree\b", re.IGNORECASE)),
    (_PLACE_ASKED, _PLACE),
    (re.compile(r"\bwhen\b|\bwhat\s+(date|year|day|time)\b", re.IGNORECASE),
     re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b|" + _MONTH + r"|\b\d{1,2}:\d{2}\b", re.IGNORECASE)),
    (re.compile(r"\bhow\s+(many|much|often|far|big|large|fast|tall|high|old)\b|\bwhat\s+(number|percentage|share)\b|"
                r"\b(limit|maximum|minimum|max|min)\b|" + _MEASURE.pattern, re.IGNORECASE),
     re.compile(r"\b\d[\d,.]*\b")),
)
_CONTEXT_BONUS = 0.35
_FOCUS_WEIGHT = 4.0  # the asking clause's terms weigh this much more in what a chain's end must cover
_TYPED_SHARE = 0.6  # a sentence with the asked kind of value is added when its gain is this share of the best
# A yes/no comparison asks whether both share something ("Are X and Y both …", "the same …", "Does Y also …").
_BOTH = re.compile(r"\b(?:both|same|also|too)\b", re.IGNORECASE)
# A sentence that sets a name against another ("Do not confuse X with Y") says what the answer is NOT.
_CONTRAST = re.compile(r"\b(?:do\s+not|don't|not\s+to\s+be)\s+confuse|\bunlike\b|\bas\s+opposed\s+to\b|"
                       r"\bnot\s+the\s+same\s+as\b|\bdiffers?\s+from\b", re.IGNORECASE)
_FOLLOW = 0.2  # multi-hop: what a picked sentence names is the next link of the chain
_RESTATES = 0.75  # share of a sentence's content stems already in the question: it restates the question


def content_stems(text: str) -> set[str]:
    """Stems, with "-ion" nouns equated to their verbs ("deletion" ~ "deleted"): an answer sentence under
    the heading "Automatic deletion" is about data being deleted."""
    return {s[:-3] if len(s) > 7 and s.endswith("ion") and not s.endswith("sion") else s
            for s in _content_stems(text)}


def _terms_of(text: str) -> dict[str, float]:
    return {(t[:-3] if len(t) > 7 and t.endswith("ion") and not t.endswith("sion") else t): w
            for t, w in weighted_terms(text).items()}


def direct_answer(question: str) -> Answer:
    """A friendly reply to a greeting or chit-chat, without retrieval or citations."""
    lowered = fold(question)
    if re.search(r"\b(bot|robot|human|real person|ai|machine|who are you|what can you do)\b", lowered):
        return Answer(text=_BOT_REPLY)
    if re.search(r"\b(sorry|apolog)", lowered):
        return Answer(text=_SORRY_REPLY)
    if re.search(r"\b(close|bye|goodbye|weekend|have a)\b", lowered) and re.search(r"\b(thank|thx|cheers|close|bye|"
                                                                                    r"great|perfect)", lowered):
        return Answer(text=_BYE_REPLY)
    if re.search(r"\b(thank|thx|ty|cheers|appreciat|fixed|solved|worked)", lowered):
        return Answer(text=_THANKS_REPLY)
    return Answer(text=DIRECT_REPLY)



@dataclass(frozen=True)
class _Candidate:
    index: int  # evidence index
    position: int
    text: str
    stems: frozenset[str]
    weight: float  # grade weight of its evidence
    prior: float  # evidence rank and score


_TOOL_RECORD_PRIOR = 0.25


def _candidates(question: str, evidence: Sequence[Evidence]) -> list[_Candidate]:
    out: list[_Candidate] = []
    asked = content_stems(question)
    for index, e in enumerate(evidence):
        # The selection ranked the evidence (links and bridges included): its leaders count fully even when
        # their grade against the original question is low (the second hop of a chain often is).
        weight = max({Grade.CORRECT: 1.0, Grade.AMBIGUOUS: 0.75, Grade.INCORRECT: 0.35}[e.grade],
                     1.0 if index < 3 else 0.75 if index < 6 else 0.0)
        for position, unit in enumerate(units(e.text, question)):
            text = with_context(unit)
            # A bare "Yes."/"No." answers some other question (an FAQ's, the previous item's): never ours.
            text = re.sub(r"^(yes|no)[.,!]\s+(?=\w)", "", text, flags=re.IGNORECASE)
            if len(words(text)) < 3 or carries_instructions(text):  # orders to an AI are never quoted
                continue
            stems = frozenset(content_stems(f"{text} {unit.section}") | content_stems(e.title))
            # A tool's record of the requester's own account says what no general article can.
            own = _TOOL_RECORD_PRIOR if e.source_id.startswith("tool:") and stems & asked else 0.0
            out.append(_Candidate(index, position, text, stems, weight,
                                  0.05 * e.score - 0.005 * index - 0.003 * position + own))
    return out


def answer_kind(question: str) -> re.Pattern[str] | None:
    """What an answer to this question looks like: "how many times" → a number of times; else a duration,
    a price, a date, a number or a place."""
    counted = re.search(r"\bhow\s+(?:many|much)\s+([a-z]{3,})", question, re.IGNORECASE)
    if counted and counted.group(1).lower() not in ("time", "longer", "more", "does", "do", "is", "are", "will"):
        noun = re.escape(stem(counted.group(1).lower())[:5])
        return re.compile(r"\b\d[\d,.]*\s*(?:[a-z-]+\s+){0,2}" + noun, re.IGNORECASE)
    for asks, looks in _ANSWER_KINDS:
        if asks.search(question):
            return looks
    return None


def _terms(question: str) -> dict[str, float]:
    """Question terms to cover; in a ticket, the asking sentence's terms count more than the situation's."""
    terms = _terms_of(question)
    ask = ask_sentence(question)
    if ask != question:
        for t in _terms_of(ask):
            if t in terms:
                terms[t] *= 1.5
    return terms


def _gain(c: _Candidate, terms: dict[str, float], state: _State, kind: re.Pattern[str] | None,
          bridge: dict[int, set[str]]) -> float:
    """What a sentence adds: uncovered question terms, the expected kind of answer, and a link to what was
    picked already (the chain: the sentence after "ERR_4030 means suspended" is about suspension)."""
    total = sum(terms.values()) or 1.0
    hits = c.stems & terms.keys()
    new = sum(terms[t] for t in hits if t not in state.covered) / total
    base = sum(terms[t] for t in hits) / total
    chain = 0.08 * len(c.stems & bridge.get(c.index, set())) + min(
        0.25, 0.05 * len((content_stems(c.text) - terms.keys()) & state.linked))
    typed = _CONTEXT_BONUS if _typed(c, kind, state) else 0.0
    nearby = 0.08 if (c.index, c.position - 1) in state.places or (c.index, c.position + 1) in state.places else 0.0
    length = len(c.text.split())
    # A short sentence that holds the asked value ("Idle timeout: 7 days.") is the ideal answer, not a fragment.
    shape = -0.15 if length > 60 else (-0.1 if length < 5 and not typed else 0.0)
    if c.text.rstrip(" .").endswith(":"):  # a list's lead-in says nothing by itself
        shape -= 0.3
    if _contrasts(c):
        shape -= 0.3
    if not typed and restates(c.text, state.question):
        shape -= 0.25  # it repeats the question's situation and adds nothing the question asked for
    title = state.titles[c.index] if c.index < len(state.titles) else ""
    followed = (state.follow if len(title) >= 3 and title in state.said and title not in state.question_text
                else 0.0)
    return c.weight * (0.4 * base + 0.8 * new + typed + min(0.24, chain) + nearby + followed) + shape + c.prior


@dataclass
class _State:
    covered: set[str]
    linked: set[str]
    places: set[tuple[int, int]]
    asked: set[str]
    kind_found: bool = False
    question: frozenset[str] = frozenset()
    question_text: str = ""
    follow: float = 0.0  # bonus for a sentence of a passage a picked sentence names (multi-hop only)
    said: str = ""  # folded text of the sentences picked so far
    titles: tuple[str, ...] = ()  # folded base titles of the evidence, by index
    focus: frozenset[str] = frozenset()  # the stems of the question's asking clause
    measure: frozenset[str] = frozenset()  # the measured quantity a number question names (population)
    named: tuple[bool, ...] = ()  # the evidence's title is a name ("M. Ward"), not a topic ("Batch printing")


def restates(sentence: str, question_stems: frozenset[str] | set[str]) -> bool:
    """True when nearly everything a sentence says is already in the question (a worked example of the
    asker's own situation, the question rephrased): quoting it first would not answer anything."""
    stems = content_stems(sentence)
    return len(stems) >= 3 and len(stems & question_stems) >= _RESTATES * len(stems)


def _contrasts(c: _Candidate) -> bool:
    return bool(_CONTRAST.search(c.text))


def _anchor_terms(question: str, candidates: Sequence[_Candidate]) -> set[str]:
    """What the sentences about the question's specific names say besides the question: the resolved
    bridge ("ERR_4030" → organization, suspended; "Sydney" → AP-1, Business), which the answer links to."""
    names = [fold(n) for n in focus_names(question)]
    question_stems = content_stems(question)
    linked: set[str] = set()
    for c in candidates:
        if any(n in fold(c.text) for n in names):
            linked |= content_stems(c.text) - question_stems
    return linked


def _typed(c: _Candidate, kind: re.Pattern[str] | None, state: _State) -> bool:
    """The sentence holds the kind of answer asked for, next to what is asked about ("90 days" next to
    "data … deleted", not "15 minutes" next to "payment")."""
    return (kind is not None and not state.kind_found and bool(c.stems & state.asked) and state.measure <= c.stems
            and bool(kind.search(c.text)))


def measure_of(question: str) -> set[str]:
    """The measured quantity a number question names ("what was the population of …" → population): a
    number answers it only next to that word, not a birth year of the same passage."""
    found = _MEASURE.search(question)
    return content_stems(found.group(0)) if found else set()


def _pick(question: str, route: RouteDecision, evidence: Sequence[Evidence], max_sentences: int) -> _Composition:
    candidates = _candidates(question, evidence)
    terms = _terms(question)
    kind = answer_kind(question)
    question_stems = set(terms)
    bridge = {i: content_stems(e.query) - question_stems for i, e in enumerate(evidence)}
    picked: list[_Candidate] = []
    state = _State(covered=set(), linked=_anchor_terms(question, candidates), places=set(),
                   asked=set(_terms_of(ask_sentence(question))), question=frozenset(content_stems(question)),
                   question_text=fold(question),
                   titles=tuple(fold(base_title(e.title)).strip() for e in evidence),
                   named=tuple(is_name(e.title) for e in evidence), focus=frozenset(focus_terms(question)),
                   measure=frozenset(measure_of(question)),
                   follow=_FOLLOW if route.route is Route.MULTI_HOP else 0.0)

    def take(c: _Candidate) -> None:
        picked.append(c)
        state.said += " " + fold(c.text)
        state.covered.update(c.stems)
        state.linked.update(content_stems(c.text) - question_stems)
        state.places.add((c.index, c.position))
        state.kind_found = state.kind_found or _typed(c, kind, state)

    def gain(c: _Candidate) -> float:
        return _gain(c, terms, state, kind, bridge)

    entities = compared_entities(question) if route.route is Route.MULTI_PART else []
    sides: list[_Candidate] = []  # one sentence per compared entity, in the question's order
    for name in entities:
        key = fold(name)
        holders = [c for c in candidates if c not in picked and key in fold(c.text)] or [
            c for c in candidates if c not in picked and key in fold(evidence[c.index].title)]
        if holders:  # a sentence about the entity ("Business: …") rather than one mentioning it
            side = max(holders, key=lambda c: gain(c) + (0.3 if fold(c.text).startswith(key) else 0.0))
            take(side)
            sides.append(side)
    # What each sentence would add before anything is picked (the bar a typed sentence is held to below).
    fresh = {id(c): gain(c) for c in candidates} if kind is not None else {}
    first = None
    while len(picked) < max_sentences:
        pool = [c for c in candidates if c not in picked and not _repeats(c, picked)]
        if not pool:
            break
        best = max(pool, key=lambda c: (gain(c), -c.index, -c.position))
        value = gain(best)
        if first is None:  # the bar for what follows: the tool record's head start does not raise it
            first = value - (_TOOL_RECORD_PRIOR if evidence[best.index].source_id.startswith("tool:") else 0.0)
        if picked and (value < 0.12 or value < 0.4 * first):
            break
        take(best)
    if kind is not None and picked and first is not None and not any(_answers(c, kind, state, terms)[0] for c in picked):
        # Nothing picked holds the asked kind of value: the best sentence that does, when it is nearly as good,
        # answers the question ("within 30 days after …" for "by when"), the rest only surrounds it.
        typed = [c for c in candidates if c not in picked and _answers(c, kind, state, terms)[0]]
        best_typed = max(typed, key=lambda c: (fresh[id(c)], -c.index, -c.position), default=None)
        if best_typed is not None and fresh[id(best_typed)] >= _TYPED_SHARE * first:
            if len(picked) >= max_sentences:
                picked.pop()
            take(best_typed)
    if len(sides) >= 2 and len(sides) == len(entities):
        return _comparison(question, entities, sides, picked, candidates, evidence)
    end = _chain_end(picked, candidates, state, kind, terms) if route.route is Route.MULTI_HOP else None
    if end is not None and kind is not None and not kind.search(end.text) and any(
            _answers(c, kind, state, terms)[0] for c in picked):
        end = None  # a picked sentence already holds the asked kind of value; this link adds nothing
    if end is not None and end not in picked:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(end)
    # Answer first: the sentence that holds what was asked (the kind of value, next to the asked terms), then
    # the situation (sentences about the question's names: "ERR_4030 means …"), then what follows; for a
    # comparison the per-entity sentences keep their order after the lead.
    if route.route is not Route.MULTI_PART:
        names = [fold(n) for n in focus_names(question)]
        picked.sort(key=lambda c: not any(n in fold(c.text) for n in names))
    if picked:
        pool = picked
        if end is not None:
            # A chain's answer sits at its end: the sentence of a passage that another picked sentence names
            # ("… published by Two Dollar Radio" → "Two Dollar Radio is … based in Columbus, Ohio"); the
            # sentence that names it follows, so the chain reads answer → link.
            pool = [end]
            namer = next((c for c in picked if c.index != end.index and _names(fold(c.text), state.titles[end.index])),
                         None)
            if namer is not None:
                picked.remove(namer)
                picked.insert(0, namer)
        lead = max(pool, key=lambda c: _answers(c, kind, state, terms))
        picked.remove(lead)
        picked.insert(0, lead)
    return _Composition(picked)


@dataclass(frozen=True)
class _Composition:
    """The sentences of the answer in order; the first `joined` of them form its first sentence (both sides
    of a comparison), after `prefix` ("Yes: ", "No: ")."""

    sentences: list[_Candidate]
    joined: int = 1
    prefix: str = ""


def _typed_near(text: str, kind: re.Pattern[str] | None, asked: set[str]) -> bool:
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


def is_name(title: str) -> bool:
    """A title that is a proper name ("M. Ward", "Philadelphia Eagles", "Always (2011 film)"): every word but
    the connectors is capitalised (or a number); a topic title ("Batch label printing") is not."""
    bare = re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()
    tokens = [w for w in re.findall(r"[^\W_][\w'’.-]*", bare) if fold(w) not in NAME_CONNECTORS]
    return bool(tokens) and all(w[0].isupper() or w[0].isdigit() for w in tokens)


def _names(text: str, title: str) -> bool:
    """The folded `text` names the folded `title` as a whole name ("m. ward" in "by m. ward.")."""
    return len(title) >= 3 and re.search(r"(?<![\w])" + re.escape(title) + r"(?![\w])", text) is not None


def _chain_end(picked: Sequence[_Candidate], candidates: Sequence[_Candidate], state: _State,
               kind: re.Pattern[str] | None, terms: dict[str, float]) -> _Candidate | None:
    """The sentence at the end of a multi-hop chain: in a passage whose title a picked sentence of another
    passage names (and the question does not), the one that holds the asked kind of value and covers what
    the naming sentence leaves open ("M. Ward is … from Portland, Oregon" after "… album by M. Ward")."""
    best: tuple[tuple[bool, bool, float, int, int], _Candidate] | None = None
    # Names the picked sentences introduce (not the question's): a sentence elsewhere that mentions one and says
    # what the asking clause asks continues the chain too ("Hall, who was the first president of the American
    # Psychological Association" after "… published by the American Psychological Association").
    bridges = {p.index: [n for n in (fold(x) for x in capitalised_spans(p.text))
                         if len(n) >= 4 and n not in state.question_text and n not in state.titles[p.index]]
               for p in picked}
    for c in candidates:
        title = state.titles[c.index] if c.index < len(state.titles) else ""
        by_title = len(title) >= 3 and not _names(state.question_text, title) and state.named[c.index]
        text = fold(c.text)
        namers = [p for p in picked if p.index != c.index and (
            (by_title and _names(fold(p.text), title))
            or (state.focus & c.stems and any(_names(text, n) for n in bridges.get(p.index, []))))]
        if not namers:
            continue
        said = set().union(*(p.stems for p in namers))
        open_terms = {t: w * (_FOCUS_WEIGHT if t in state.focus else 1.0) for t, w in terms.items() if t not in said}
        total = sum(open_terms.values()) or 1.0
        cover = sum(w for t, w in open_terms.items() if t in c.stems) / total
        typed = kind is not None and bool(kind.search(c.text))
        if not typed and cover <= 0 and c.position > 0:
            continue
        lead_named = 0.1 if picked and namers[0] is picked[0] else 0.0
        score = round(cover + (0.1 if c.position == 0 else 0.0) + lead_named + 0.05 * c.weight, 6)
        key = (typed, typed and _typed_near(c.text, kind, state.asked), score, -c.index, -c.position)
        if best is None or key > best[0]:
            best = (key, c)
    return best[1] if best else None


def _about(name: str, candidates: Sequence[_Candidate], evidence: Sequence[Evidence]) -> list[str]:
    """The sentences about a compared entity: those of its own passage and those naming it."""
    key = fold(name)
    own = [c.text for c in candidates if key in fold(evidence[c.index].title) or fold(base_title(
        evidence[c.index].title)).strip() in (key, key.removeprefix("the "))]
    return own + [c.text for c in candidates if key in fold(c.text) and c.text not in own]


def _broad_names(evidence: Sequence[Evidence]) -> frozenset[str]:
    """Names so common in the evidence that sharing them tells two things apart from nothing ("United States")."""
    counts: dict[str, int] = {}
    for e in evidence:
        for span in {fold(s) for s in capitalised_spans(e.text)}:
            counts[span] = counts.get(span, 0) + 1
    return frozenset(n for n, k in counts.items() if k >= max(3, len(evidence) // 3))


def _comparison(question: str, entities: Sequence[str], sides: list[_Candidate], picked: list[_Candidate],
                candidates: Sequence[_Candidate], evidence: Sequence[Evidence]) -> _Composition:
    """Both sides in the first sentence: "Yes: …; …" when both entities have what a yes/no question asks,
    "No: …; …" when one lacks it; for "which came first" the earlier entity's sentence leads."""
    about = [_about(name, candidates, evidence) for name in entities]
    prefix = ""
    order = list(sides)
    if is_yes_no(question) and _BOTH.search(ask_sentence(question)):
        verdict = both_verdict(question, entities, about, _broad_names(evidence))
        prefix = "" if verdict is None else ("Yes: " if verdict else "No: ")
    else:
        winner = temporal_winner(question, about)
        if winner is not None:
            order.insert(0, order.pop(winner))
    rest = [c for c in picked if c not in order]
    return _Composition(order + rest, joined=len(order), prefix=prefix)


def _answers(c: _Candidate, kind: re.Pattern[str] | None, state: _State,
             terms: dict[str, float]) -> tuple[bool, bool, bool, float]:
    """How well a picked sentence answers the asking sentence: it holds the expected kind of value next to
    the asked terms, it neither restates the question nor sets a name against another, and it covers the
    asked terms (weighted) with something the question did not already say."""
    asked = c.stems & state.asked
    typed = kind is not None and bool(asked) and state.measure <= c.stems and bool(kind.search(c.text))
    clean = not restates(c.text, state.question) and not _contrasts(c)
    novel = bool(content_stems(c.text) - state.question)
    total = sum(terms.values()) or 1.0
    cover = sum(terms.get(t, 0.0) for t in asked) / total + 0.5 * sum(terms.get(t, 0.0) for t in c.stems) / total
    return typed, clean, novel, round(cover + 0.001 * c.weight, 6)


def _repeats(c: _Candidate, picked: Sequence[_Candidate]) -> bool:
    """A sentence that says (nearly) what a picked one says."""
    return any(len(c.stems & p.stems) >= 0.8 * max(1, min(len(c.stems), len(p.stems))) for p in picked)


def _join(sentences: Sequence[str]) -> str:
    """Cited sentences as one: "A [1]; B [2]." (both sides of a comparison in the first sentence)."""
    if len(sentences) <= 1:
        return "".join(sentences)
    parts = [s.rstrip()[:-1] if s.rstrip()[-1:] in ".!?" else s.rstrip() for s in sentences]
    return "; ".join(parts) + "."


def _cited(sentence: str, marker: int) -> str:
    sentence = sentence.rstrip()
    if sentence and sentence[-1] in ".!?":
        return f"{sentence[:-1]} [{marker}]{sentence[-1]}"
    return f"{sentence} [{marker}]."


def synthesize_answer(question: str, route: RouteDecision, evidence: Sequence[Evidence],
                      max_sentences: int = 4) -> Answer:
    """An extractive, cited answer from `evidence` (already selected and compressed), or a refusal."""
    if route.route is Route.DIRECT:
        return direct_answer(question)
    if route.route is Route.OUT_OF_CORPUS or not has_support(question, evidence):
        absent = unsupported_names(question, evidence)
        return refusal(f"the knowledge base does not mention {', '.join(absent)}" if absent and evidence
                       else "no evidence in the knowledge base agrees with the question")
    composition = _pick(question, route, evidence, max_sentences)
    picked = composition.sentences
    if not picked:
        return refusal("the evidence holds no sentence that answers the question")
    used = list(dict.fromkeys(c.index for c in picked))
    citations = cite([evidence[i] for i in used])
    marker_of = {i: c.marker for i, c in zip(used, citations, strict=True)}
    cited = [_cited(c.text, marker_of[c.index]) for c in picked]
    head = _join(cited[: composition.joined])
    text = " ".join([composition.prefix + head if composition.prefix else head, *cited[composition.joined:]])
    weak = not any(evidence[i].grade is Grade.CORRECT for i in used)
    return Answer(text=text, citations=citations,
                  caveat="the supporting evidence is weak; verify before relying on it" if weak else None)
