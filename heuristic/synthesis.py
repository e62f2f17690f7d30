"""Extractive synthesis: a short answer (the 2–4 sentences of the selected evidence that best answer the
question, markdown turned into plain sentences, each cited), or a refusal when no evidence supports it.

Sentences are chosen greedily by what they add: question terms not yet covered (names and numbers count
double), the kind of answer the question asks for (a duration for "how long", a price for "how much does …
cost"), the evidence's grade, and for comparisons one sentence per compared entity first. The answer then
leads with what was asked: the sentence holding the asked kind of value (`heuristic.kinds`), the end of a
multi-hop chain (`heuristic.chains`), or both sides of a comparison in one first sentence with its verdict
("Yes: …; …", the earlier entity first: `heuristic.verdicts`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from heuristic.chains import ChainContext, Sentence, chain_end, is_name, named_in
from heuristic.focus import focus_names
from heuristic.grader import weighted_terms
from heuristic.kinds import URL, answer_kind, answer_kinds, focus_terms, measure_of
from heuristic.mentions import base_title
from heuristic.prose import units, with_context
from heuristic.router import compared_entities
from heuristic.sufficiency import has_support, unsupported_names
from heuristic.verdicts import about as verdict_about
from heuristic.verdicts import both_verdict, broad_names, is_yes_no, temporal_winner, yes_no_prefix
from investigation.answers import refusal
from investigation.citations import cite
from investigation.guards import carries_instructions
from investigation.memo import memoised
from investigation.state import Answer, Evidence, Grade, Route, RouteDecision
from investigation.text import TEXT_CACHE_SIZE, ask_sentence, fold, words
from investigation.text import content_stems as _content_stems

DIRECT_REPLY = ("Hello! I'm Sleuth. Ask me a question about your knowledge base and I will investigate it "
                "and answer with citations.")
_THANKS_REPLY = "You're welcome! Ask me anything else about your knowledge base whenever you need."
_SORRY_REPLY = "No problem at all! Ask me anything about your knowledge base whenever you are ready."
_BOT_REPLY = ("I'm Sleuth, an automated assistant. Ask me a question about your knowledge base and I will "
              "investigate it and answer with citations.")
_BYE_REPLY = "You're welcome, glad it helped! Have a good one, and ask me anything whenever you need."
_CONTEXT_BONUS = 0.35
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
    return set(_ion_stems(text))


@memoised(TEXT_CACHE_SIZE)  # every candidate sentence, in every round of the pick
def _ion_stems(text: str) -> frozenset[str]:
    return frozenset(s[:-3] if len(s) > 7 and s.endswith("ion") and not s.endswith("sion") else s
                     for s in _content_stems(text))


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



_TOOL_RECORD_PRIOR = 0.25
_NAMED_WEIGHT = 0.75  # the grade weight of an ambiguous passage


def _candidates(question: str, evidence: Sequence[Evidence]) -> list[Sentence]:
    out: list[Sentence] = []
    asked = content_stems(question)
    names = [fold(n) for n in focus_names(question)]
    rare = [n for n in names if len(n) >= 3 and 0 < sum(n in fold(e.text) for e in evidence) <= max(1, len(evidence) // 4)]
    for index, e in enumerate(evidence):
        # The selection ranked the evidence (links and bridges included): its leaders count fully even when
        # their grade against the original question is low (the second hop of a chain often is).
        weight = max({Grade.CORRECT: 1.0, Grade.AMBIGUOUS: 0.75, Grade.INCORRECT: 0.35}[e.grade],
                     1.0 if index < 3 else 0.75 if index < 6 else 0.0)
        subject = re.sub(r"\s*\([^)]*\)\s*$", "", e.title).strip() if is_name(e.title) else ""
        work = bool(_WORK.search(e.text[:400]))
        for position, unit in enumerate(units(e.text, question)):
            text = resolve_pronoun(with_context(unit), subject, work=work)
            # A bare "Yes."/"No." answers some other question (an FAQ's, the previous item's): never ours.
            text = re.sub(r"^(yes|no)[.,!]\s+(?=\w)", "", text, flags=re.IGNORECASE)
            if len(words(text)) < 3 or carries_instructions(text):  # orders to an AI are never quoted
                continue
            # The stems of f"{text} {unit.section}" and of the title, from each part's (the sentence's are read
            # anyway, and sections and titles repeat): no word spans the space between two parts.
            stems = _ion_stems(text) | _ion_stems(unit.section) | _ion_stems(e.title)
            # The only sentences naming the question's own specific place, code or product ("Sydney") are about
            # the asker's case however the passage as a whole was graded.
            sentence_weight = max(weight, _NAMED_WEIGHT) if any(n in fold(text) for n in rare) else weight
            # A tool's record of the requester's own account says what no general article can.
            own = _TOOL_RECORD_PRIOR if e.source_id.startswith("tool:") and stems & asked else 0.0
            out.append(Sentence(index, position, text, stems, sentence_weight,
                                0.05 * e.score - 0.005 * index - 0.003 * position + own))
    return out


_PRONOUN = re.compile(r"^(?:(He|She|They|It)|(His|Her|Their|Its))\s+(?=[a-z0-9])")


# A passage about a work, place or organisation: its "He"/"She" is somebody else (the author, a founder).
_WORK = re.compile(r"\b(?:is|was|are|were)\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,5}(?:film|movie|album|song|single|ballet|"
                   r"opera|novel|book|play|poem|series|sitcom|show|game|episode|band|group|company|magazine|newspaper|"
                   r"journal|river|city|town|village|county|station|airport|school|university|college|team|club|ship|"
                   r"building|church|museum|park|festival|award|brand|network|channel|label|party)s?\b", re.IGNORECASE)


def resolve_pronoun(sentence: str, subject: str, *, work: bool = False) -> str:
    """A sentence quoted out of its passage says whom it is about: in a passage named after a person or a
    thing, a leading "He"/"She"/"It"/"They" becomes the name ("He was a Formula One driver" → "Eddie Irvine
    was a Formula One driver"), "His"/"Her"/"Its"/"Their" the name's possessive; in a passage about a
    `work` (a film, a song, a company) only "It"/"Its" is the work; "He", "She", "They" are people and stay."""
    found = _PRONOUN.match(sentence)
    if not subject or not found or fold(subject) in fold(sentence):
        return sentence
    if work and (found.group(1) or found.group(2)) not in ("It", "Its"):
        return sentence  # a work's "He" is its author, its "They" its performers
    name = subject if found.group(1) else f"{subject}'s"
    return f"{name} {sentence[found.end():]}"


def _terms(question: str) -> dict[str, float]:
    """Question terms to cover; in a ticket, the asking sentence's terms count more than the situation's."""
    terms = _terms_of(question)
    ask = ask_sentence(question)
    if ask != question:
        for t in _terms_of(ask):
            if t in terms:
                terms[t] *= 1.5
    return terms


_RARITY = 1.0  # how much more the rarest question term weighs than one every evidence sentence holds


def _rarity(terms: dict[str, float], candidates: Sequence[Sentence]) -> dict[str, float]:
    """Question terms that few evidence sentences hold weigh more ("passkeys" beside "members", "sign in"): the
    sentences that hold them are about what this question asks, not about the topic every passage shares."""
    if len(candidates) < 4:
        return terms
    held = {t: sum(t in c.stems for c in candidates) for t in terms}
    n = len(candidates)
    return {t: w * (1.0 + _RARITY * math.log((n + 1) / (held[t] + 1)) / math.log(n + 1)) if held[t] else w
            for t, w in terms.items()}


@dataclass(frozen=True, slots=True)
class _Fixed:
    """What `_gain` reads of a sentence that stays the same while one answer is picked (the question's terms,
    kind, codes and situation are all set before the first round): worked out once per sentence, not in
    every round of the pick."""

    hits: AbstractSet[str]  # the question terms it holds (the set as built: summed in its own order, as before)
    base: float  # their share of the question's weight
    beyond: frozenset[str]  # its (-ion) stems that are not question terms: what links it to a picked sentence
    typed: bool  # it holds the asked kind of value next to what is asked (`_typed`, before one is found)
    concludes: bool  # `_concludes`
    others: float  # the bonus for also answering a further question joined by "and"
    length: int  # words
    lead_in: bool  # a list's lead-in ("… as follows:")
    off: bool  # it sets a name against another, or is about another code of the question's family
    restated: bool  # `restates` the question


def _fixed(c: Sentence, terms: dict[str, float], total: float, state: _State,
           kind: re.Pattern[str] | None) -> _Fixed:
    hits = terms.keys() & c.stems  # a set in CPython's order either way round (the view's `&` takes both)
    return _Fixed(
        hits=hits, base=sum(terms[t] for t in hits) / total, beyond=_ion_stems(c.text).difference(terms),
        typed=_holds_asked_kind(c, kind, state),
        concludes=_concludes(c, kind, state),
        others=sum(0.5 * _CONTEXT_BONUS for other, wanted in state.others if other.search(c.text) and c.stems & wanted),
        length=len(c.text.split()), lead_in=c.text.rstrip(" .").endswith(":"), off=_contrasts(c) or _sibling(c, state),
        restated=restates(c.text, state.question))


def _gain(c: Sentence, fixed: _Fixed, terms: dict[str, float], total: float, state: _State,
          bridge: dict[int, set[str]]) -> float:
    """What a sentence adds: uncovered question terms, the expected kind of answer, and a link to what was
    picked already (the chain: the sentence after "ERR_4030 means suspended" is about suspension)."""
    new = sum(terms[t] for t in fixed.hits if t not in state.covered) / total
    chain = 0.08 * len(c.stems & bridge.get(c.index, set())) + min(0.25, 0.05 * len(fixed.beyond & state.linked))
    typed = _CONTEXT_BONUS if fixed.typed and not state.kind_found else 0.0
    if fixed.concludes:
        typed = 2 * _CONTEXT_BONUS  # the outcome of the asker's own situation is the answer itself
    # A sentence that also answers the second question of "how much … and how many …?" answers both at once.
    typed += fixed.others
    nearby = 0.08 if (c.index, c.position - 1) in state.places or (c.index, c.position + 1) in state.places else 0.0
    length = fixed.length
    # A short sentence that holds the asked value ("Idle timeout: 7 days.") is the ideal answer, not a fragment.
    shape = -0.15 if length > 60 else (-0.1 if length < 5 and not typed else 0.0)
    if fixed.lead_in:  # a list's lead-in says nothing by itself
        shape -= 0.3
    if fixed.off:
        shape -= 0.3
    if (not typed and fixed.restated) or (c.index, c.position) in state.situation:
        shape -= 0.25  # it repeats the question's situation and adds nothing the question asked for
    title = state.titles[c.index] if c.index < len(state.titles) else ""
    followed = (state.follow if len(title) >= 3 and title in state.said and title not in state.question_text
                else 0.0)
    return c.weight * (0.4 * fixed.base + 0.8 * new + typed + min(0.24, chain) + nearby + followed) + shape + c.prior


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
    situation: frozenset[tuple[int, int]] = frozenset()  # sentences that retell the asker's own numbers
    concluding: frozenset[tuple[int, int]] = frozenset()  # the sentences right after those: their outcome
    others: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = ()  # kinds and terms of further asks
    codes: frozenset[str] = frozenset()  # the question's codes ("ERR_4031", "EU-1"), folded
    left: frozenset[str] = frozenset()  # what the asker moved away from ("from EU-1 to AP-1" → eu-1), folded
    reached: frozenset[str] = frozenset()  # where the asker is now ("… to AP-1" → ap-1), folded

    @property
    def chain(self) -> ChainContext:
        return ChainContext(question_text=self.question_text, titles=self.titles, named=self.named,
                            focus=self.focus, asked=frozenset(self.asked))


def restates(sentence: str, question_stems: frozenset[str] | set[str]) -> bool:
    """True when nearly everything a sentence says is already in the question (a worked example of the
    asker's own situation, the question rephrased): quoting it first would not answer anything."""
    stems = _ion_stems(sentence)
    return len(stems) >= 3 and len(stems & question_stems) >= _RESTATES * len(stems)


_NUMBER = re.compile(r"(?<![\w.,-])[$€£]?(\d[\d,.]*\d|\d)(?![\w-])")


def _numbers(text: str) -> set[str]:
    """The stand-alone numbers of a text ("$700" → 700, "43,200"), not those inside names ("EU-1", "ERR_4030")."""
    return {m.group(1).replace(",", "") for m in _NUMBER.finditer(text)}


def _situations(question: str, candidates: Sequence[Sentence]) -> tuple[frozenset[tuple[int, int]],
                                                                           frozenset[tuple[int, int]]]:
    """Sentences that retell the asker's situation with the asker's own numbers (a worked example: "A Business
    organization … $700 per month has 60 downtime minutes …"), and the sentences right after them, which say
    what follows for that situation ("… so the credit is 10%, or $70")."""
    given = _numbers(question)
    if len(given) < 2:
        return frozenset(), frozenset()
    retold = frozenset((c.index, c.position) for c in candidates if len(_numbers(c.text) & given) >= 2)
    return retold, frozenset((i, p + 1) for i, p in retold if (i, p + 1) not in retold)


def _concludes(c: Sentence, kind: re.Pattern[str] | None, state: _State) -> bool:
    """The sentence after a retold situation holds the asked kind of value: the outcome for the asker."""
    return (kind is not None and (c.index, c.position) in state.concluding
            and bool(kind.search(c.text)))


_CODE_ID = re.compile(r"\b[A-Z]{2,}[_-]\d+\b")


# "We moved our workspace from EU-1 to AP-1": a change between two named things (upgraded from Team to Business).
_MOVE = re.compile(r"\bfrom\s+((?-i:[A-Z][\w-]*))\s+to\s+((?-i:[A-Z][\w-]*))", re.IGNORECASE)


def _sibling(c: Sentence, state: _State) -> bool:
    """The sentence is about another code of the same family than the question's ("ERR_4221 — Webhook endpoint
    disabled …" for a question about ERR_4031) and does not name the question's own: it answers another ticket."""
    text = fold(c.text)
    if state.left and any(_word_in(a, text) for a in state.left) and not any(_word_in(b, text) for b in state.reached):
        return True  # it is about what the asker has left ("… for EU-1" after a move from EU-1 to AP-1)
    if not state.codes:
        return False
    found = {fold(m.group(0)) for m in _CODE_ID.finditer(c.text)}
    families = {re.split(r"[_-]", code)[0] for code in state.codes}
    return bool(found) and not found & state.codes and any(re.split(r"[_-]", f)[0] in families for f in found)


def _word_in(word: str, text: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def _contrasts(c: Sentence) -> bool:
    return _contrast_in(c.text)


@memoised(TEXT_CACHE_SIZE)  # asked of every candidate in every round of the pick
def _contrast_in(text: str) -> bool:
    return bool(_CONTRAST.search(text))


def _anchor_terms(question: str, candidates: Sequence[Sentence]) -> set[str]:
    """What the sentences about the question's specific names say besides the question: the resolved
    bridge ("ERR_4030" → organization, suspended; "Sydney" → AP-1, Business), which the answer links to."""
    names = [fold(n) for n in focus_names(question)]
    question_stems = content_stems(question)
    linked: set[str] = set()
    for c in candidates:
        if any(n in fold(c.text) for n in names):
            linked |= content_stems(c.text) - question_stems
    return linked


def _typed(c: Sentence, kind: re.Pattern[str] | None, state: _State) -> bool:
    """The sentence holds the kind of answer asked for, next to what is asked about, and none picked so far
    does."""
    return not state.kind_found and _holds_asked_kind(c, kind, state)


def _holds_asked_kind(c: Sentence, kind: re.Pattern[str] | None, state: _State) -> bool:
    """The sentence holds the kind of answer asked for, next to what is asked about ("90 days" next to
    "data … deleted", not "15 minutes" next to "payment")."""
    return (kind is not None and (bool(c.stems & state.asked) or kind is URL)
            and state.measure <= c.stems and bool(kind.search(c.text)) and not _sibling(c, state))


def _pick(question: str, route: RouteDecision, evidence: Sequence[Evidence], max_sentences: int) -> _Composition:
    candidates = _candidates(question, evidence)
    terms = _terms(question)
    if route.route is not Route.MULTI_HOP:
        # Not along a chain: there the question's rare words name its far end, and weighting them pulls the
        # answer off the chain's last link (it lowered MuSiQue's answers).
        terms = _rarity(terms, candidates)
    kind = answer_kind(question)
    question_stems = set(terms)
    bridge = {i: content_stems(e.query) - question_stems for i, e in enumerate(evidence)}
    picked: list[Sentence] = []
    state = _State(covered=set(), linked=_anchor_terms(question, candidates), places=set(),
                   asked=set(_terms_of(ask_sentence(question))), question=frozenset(content_stems(question)),
                   question_text=fold(question),
                   titles=tuple(fold(base_title(e.title)).strip() for e in evidence),
                   named=tuple(is_name(e.title) for e in evidence), focus=frozenset(focus_terms(question)),
                   measure=frozenset(measure_of(question)),
                   follow=_FOLLOW if route.route is Route.MULTI_HOP else 0.0)
    state.situation, state.concluding = _situations(question, candidates)
    state.codes = frozenset(fold(m.group(0)) for m in _CODE_ID.finditer(question))
    moves = [(fold(m.group(1)), fold(m.group(2))) for m in _MOVE.finditer(question)]
    state.left, state.reached = frozenset(a for a, _b in moves), frozenset(b for _a, b in moves)
    state.others = tuple((k, frozenset(_terms_of(clause))) for clause, k in answer_kinds(question)[1:] if k is not None)

    def take(c: Sentence) -> None:
        picked.append(c)
        state.said += " " + fold(c.text)
        state.covered.update(c.stems)
        state.linked.update(content_stems(c.text) - question_stems)
        state.places.add((c.index, c.position))
        state.kind_found = state.kind_found or _typed(c, kind, state)

    total = sum(terms.values()) or 1.0
    fixed: dict[int, _Fixed] = {}  # by id(): the candidates live as long as the pick

    def gain(c: Sentence) -> float:
        known = fixed.get(id(c))
        if known is None:
            known = fixed[id(c)] = _fixed(c, terms, total, state, kind)
        return _gain(c, known, terms, total, state, bridge)

    entities = compared_entities(question) if route.route is Route.MULTI_PART else []
    sides: list[Sentence] = []  # one sentence per compared entity, in the question's order
    for name in entities:
        key = fold(name)
        stems = content_stems(name)
        # A sentence naming the entity, or one under its heading ("## Team" → "Price: $15 per seat …").
        holders = [c for c in candidates if c not in picked and (key in fold(c.text) or (stems and stems <= c.stems))] or [
            c for c in candidates if c not in picked and key in fold(evidence[c.index].title)]
        if holders:  # a sentence about the entity ("Business: …") rather than one mentioning it
            # One that holds the asked kind of value ("EUR €1.90" for a price in euros) before one that does not.
            side = max(holders, key=lambda c: (kind is not None and bool(kind.search(c.text)),
                                               gain(c) + _about_bonus(c, key, stems, fold(evidence[c.index].title))))
            take(side)
            sides.append(side)
    # What each sentence would add before anything is picked (the bar a typed sentence is held to below).
    fresh = {id(c): gain(c) for c in candidates} if kind is not None else {}
    first = None
    while len(picked) < max_sentences:
        # A retelling of the asker's own situation is never quoted when what follows from it is at hand.
        pool = [c for c in candidates if c not in picked and not _repeats(c, picked)
                and not ((c.index, c.position) in state.situation and state.concluding)]
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
        typed = [c for c in candidates if c not in picked and _answers(c, kind, state, terms)[0]
                 and not _sibling(c, state) and (not state.focus or c.stems & state.focus)]
        best_typed = max(typed, key=lambda c: (fresh[id(c)], -c.index, -c.position), default=None)
        if best_typed is not None and fresh[id(best_typed)] >= _TYPED_SHARE * first:
            if len(picked) >= max_sentences:
                picked.pop()
            take(best_typed)
    for other, wanted in state.others:
        # A second question joined by "and" ("… and by when must we claim it?") is answered too.
        if not wanted or any(other.search(c.text) and c.stems & wanted for c in picked):
            continue
        extra = [c for c in candidates if c not in picked and other.search(c.text) and c.stems & wanted
                 and not _repeats(c, picked)]
        if extra:
            if len(picked) >= max_sentences:
                picked.pop()
            take(max(extra, key=lambda c: (gain(c), -c.index, -c.position)))
    if len(sides) >= 2 and len(sides) == len(entities):
        return _comparison(question, entities, sides, picked, candidates, evidence)
    end = chain_end(picked, candidates, state.chain, kind, terms) if route.route is Route.MULTI_HOP else None
    if end is not None and kind is not None and not kind.search(end.text) and any(
            _answers(c, kind, state, terms)[0] for c in picked):
        end = None  # a picked sentence already holds the asked kind of value; this link adds nothing
    if end is not None and end not in picked:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(end)
    rule = _document_rule(picked, candidates, evidence, question_stems)
    if rule is not None:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(rule)
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
            namer = next((c for c in picked if c.index != end.index and named_in(fold(c.text), state.titles[end.index])),
                         None)
            if namer is not None:
                picked.remove(namer)
                picked.insert(0, namer)
        lead = max(pool, key=lambda c: _answers(c, kind, state, terms))
        picked.remove(lead)
        picked.insert(0, lead)
        return _Composition(picked, prefix=yes_no_prefix(question, lead.text))
    return _Composition(picked)


def _document_rule(picked: Sequence[Sentence], candidates: Sequence[Sentence], evidence: Sequence[Evidence],
                   question_stems: set[str]) -> Sentence | None:
    """A tool's record says what is true of the requester's case; the rule the question also asks about
    ("… delayed. Can I get a refund?") is in the documents. When every picked sentence is a tool record's,
    the document sentence holding the most question words none of them covers joins the answer."""
    if not picked or not all(evidence[c.index].source_id.startswith("tool:") for c in picked):
        return None
    uncovered = question_stems - set().union(*(c.stems for c in picked))
    documents = [c for c in candidates if not evidence[c.index].source_id.startswith("tool:")
                 and evidence[c.index].grade is not Grade.INCORRECT and c.stems & uncovered]
    if not documents:
        return None
    return max(documents, key=lambda c: (len(c.stems & uncovered), c.weight, c.prior))


def _about_bonus(c: Sentence, key: str, stems: set[str], title: str) -> float:
    """How plainly a sentence is about a compared entity: it starts with its name ("Business: …"), opens the
    entity's own passage, or sits under the entity's heading in another document ("## Team" → "Price: …")."""
    text = fold(c.text)
    if text.startswith(key):
        return 0.3
    if key in title:
        return 0.2 if c.position == 0 else 0.0
    return 0.15 if key not in text and stems <= c.stems else 0.0


@dataclass(frozen=True)
class _Composition:
    """The sentences of the answer in order; the first `joined` of them form its first sentence (both sides
    of a comparison), after `prefix` ("Yes: ", "No: ")."""

    sentences: list[Sentence]
    joined: int = 1
    prefix: str = ""


def _comparison(question: str, entities: Sequence[str], sides: list[Sentence], picked: list[Sentence],
                candidates: Sequence[Sentence], evidence: Sequence[Evidence]) -> _Composition:
    """Both sides in the first sentence: "Yes: …; …" when both entities have what a yes/no question asks,
    "No: …; …" when one lacks it; for "which came first" the earlier entity's sentence leads."""
    sentences = [(c.text, evidence[c.index].title) for c in candidates]
    about = [verdict_about(name, sentences) for name in entities]
    prefix = ""
    order = list(sides)
    if is_yes_no(question) and _BOTH.search(ask_sentence(question)):
        verdict = both_verdict(question, entities, about, broad_names([e.text for e in evidence]))
        prefix = "" if verdict is None else ("Yes: " if verdict else "No: ")
    else:
        winner = temporal_winner(question, about)
        if winner is not None:
            order.insert(0, order.pop(winner))
    rest = [c for c in picked if c not in order]
    return _Composition(order + rest, joined=len(order), prefix=prefix)


def _answers(c: Sentence, kind: re.Pattern[str] | None, state: _State,
             terms: dict[str, float]) -> tuple[bool, bool, bool, bool, float]:
    """How well a picked sentence answers the asking sentence: it holds the expected kind of value next to
    the asked terms, it neither restates the question nor sets a name against another, and it covers the
    asked terms (weighted) with something the question did not already say."""
    asked = c.stems & state.asked
    typed = (kind is not None and (bool(asked) or kind is URL) and state.measure <= c.stems
             and bool(kind.search(c.text)) and not _sibling(c, state))
    clean = (not restates(c.text, state.question) and not _contrasts(c) and not _sibling(c, state)
             and (c.index, c.position) not in state.situation)
    concludes = (c.index, c.position) in state.concluding and kind is not None and bool(kind.search(c.text))
    novel = bool(content_stems(c.text) - state.question)
    total = sum(terms.values()) or 1.0
    cover = sum(terms.get(t, 0.0) for t in asked) / total + 0.5 * sum(terms.get(t, 0.0) for t in c.stems) / total
    return typed, clean, concludes, novel, round(cover + 0.001 * c.weight, 6)


def _repeats(c: Sentence, picked: Sequence[Sentence]) -> bool:
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
