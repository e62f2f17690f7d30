"""What the answer's pick weighs, without an LLM: the candidate sentences of the evidence (pronouns resolved,
tool records and ambiguous passages weighted), the question's terms and their rarity, and each sentence's
gain in a round of the pick (`PickState`: what the picked sentences already cover)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from heuristic.chains import ChainContext, Sentence, is_name
from heuristic.focus import focus_names
from heuristic.grader import asking_stems, standing_for, weighted_terms
from heuristic.kinds import URL
from heuristic.prose import units, with_context
from heuristic.referents import leading_name, resolve_pronoun
from heuristic.subjects import opens_with, question_subject
from heuristic.verdicts import answers_no
from investigation.guards import carries_instructions
from investigation.memo import memoised
from investigation.state import Evidence, Grade
from investigation.text import TEXT_CACHE_SIZE, ask_sentence, fold, words
from investigation.text import content_stems as _content_stems

_CONTEXT_BONUS = 0.35
TYPED_SHARE = 0.6  # a sentence with the asked kind of value is added when its gain is this share of the best
# A yes/no comparison asks whether both share something ("Are X and Y both …", "the same …", "Does Y also …").
BOTH = re.compile(r"\b(?:both|same|also|too)\b", re.IGNORECASE)
# A sentence that sets a name against another ("Do not confuse X with Y") says what the answer is NOT.
_CONTRAST = re.compile(r"\b(?:do\s+not|don't|not\s+to\s+be)\s+confuse|\bunlike\b|\bas\s+opposed\s+to\b|"
                       r"\bnot\s+the\s+same\s+as\b|\bdiffers?\s+from\b", re.IGNORECASE)
FOLLOW = 0.2  # multi-hop: what a picked sentence names is the next link of the chain
_RESTATES = 0.75  # share of a sentence's content stems already in the question: it restates the question


def content_stems(text: str) -> set[str]:
    """Stems, with "-ion" nouns equated to their verbs ("deletion" ~ "deleted"): an answer sentence under
    the heading "Automatic deletion" is about data being deleted."""
    return set(_ion_stems(text))


@memoised(TEXT_CACHE_SIZE)  # every candidate sentence, in every round of the pick
def _ion_stems(text: str) -> frozenset[str]:
    return frozenset(s[:-3] if len(s) > 7 and s.endswith("ion") and not s.endswith("sion") else s
                     for s in _content_stems(text))


def terms_of(text: str) -> dict[str, float]:
    return {(t[:-3] if len(t) > 7 and t.endswith("ion") and not t.endswith("sion") else t): w
            for t, w in weighted_terms(text).items()}




TOOL_RECORD_PRIOR = 0.25
_NAMED_WEIGHT = 0.75  # the grade weight of an ambiguous passage
_SAID_ITSELF = 0.03  # the prior of a sentence whose own words hold all the question's terms


def candidate_sentences(question: str, evidence: Sequence[Evidence]) -> list[Sentence]:
    out: list[Sentence] = []
    asked = content_stems(question)
    asked_about = question_subject(question)
    names = [fold(n) for n in focus_names(question)]
    rare = [
        n
        for n in names
        if len(n) >= 3 and 0 < sum(n in fold(e.text) for e in evidence) <= max(1, len(evidence) // 4)
    ]
    for index, e in enumerate(evidence):
        # The selection ranked the evidence (links and bridges included): its leaders count fully even when
        # their grade against the original question is low (the second hop of a chain often is).
        weight = max({Grade.CORRECT: 1.0, Grade.AMBIGUOUS: 0.75, Grade.INCORRECT: 0.35}[e.grade],
                     1.0 if index < 3 else 0.75 if index < 6 else 0.0)
        subject = re.sub(r"\s*\([^)]*\)\s*$", "", e.title).strip() if is_name(e.title) else ""
        work = bool(_WORK.search(e.text[:400]))
        carried = ""  # in a topic's passage, the name the sentence before opened with (`heuristic.referents`)
        for position, unit in enumerate(units(e.text, question)):
            text = resolve_pronoun(with_context(unit), subject or carried, work=work or not subject)
            carried = leading_name(text)
            # A bare "Yes."/"No." answers some other question (an FAQ's, the previous item's): never ours.
            # In a Q/A FAQ "A:" only marks an answer; a "Q: …?" line is the question it answers, never an
            # answer. Orders to an AI are never quoted.
            text = re.sub(r"^(yes|no)[.,!]\s+(?=\w)", "", re.sub(r"^A:\s+", "", text), flags=re.IGNORECASE)
            if len(words(text)) < 3 or carries_instructions(text) or re.match(r"Q:\s.*\?$", text):
                continue
            # The stems of f"{text} {unit.section}" and of the title, from each part's (the sentence's are
            # read anyway, and sections and titles repeat): no word spans the space between two parts.
            stems = _ion_stems(text) | _ion_stems(unit.section) | _ion_stems(e.title)
            # A reworded question's generic word ("the smallest top-up") is said by its group's other word.
            stems |= standing_for(question, asked, stems, text)
            # The only sentences naming the question's own specific place, code or product ("Sydney") are
            # about the asker's case however the passage as a whole was graded.
            sentence_weight = max(weight, _NAMED_WEIGHT) if any(n in fold(text) for n in rare) else weight
            # A tool's record of the requester's own account says what no general article can.
            own = TOOL_RECORD_PRIOR if e.source_id.startswith("tool:") and stems & asked else 0.0
            # A question in the words of a passage's title ("What are support hours?" in "Support hours
            # and contact"): every sentence holds them through the title; one saying them itself is about
            # them.
            said = _SAID_ITSELF * len(_ion_stems(text) & asked) / len(asked) if asked else 0.0
            # "How quickly do refunds reach us?": a fact about refunds opens with them ("Refunds go back …").
            said += _SAID_ITSELF if asked_about and opens_with(text, asked_about) else 0.0
            out.append(Sentence(index, position, text, stems, sentence_weight,
                                0.05 * e.score - 0.005 * index - 0.003 * position + own + said))
    return out


# A passage about a work, place or organisation: its "He"/"She" is somebody else (the author, a founder).
_WORK = re.compile(
    r"\b(?:is|was|are|were)\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,5}(?:film|movie|album|song|single|ballet|"
    r"opera|novel|book|play|poem|series|sitcom|show|game|episode|band|group|company|magazine|newspaper|"
    r"journal|river|city|town|village|county|station|airport|school|university|college|team|club|ship|"
    r"building|church|museum|park|festival|award|brand|network|channel|label|party)s?\b",
    re.IGNORECASE,
)


def question_terms(question: str) -> dict[str, float]:
    """Question terms to cover; in a ticket, the asking sentence's terms count more than the situation's."""
    terms = terms_of(question)
    asking = asking_stems(question)  # "how quickly", a lower-case "us": no sentence holds what they ask
    terms = {t: w for t, w in terms.items() if t not in asking} or terms
    ask = ask_sentence(question)
    if ask != question:
        for t in terms_of(ask):
            if t in terms:
                terms[t] *= 1.5
    return terms


_RARITY = 1.0  # how much more the rarest question term weighs than one every evidence sentence holds


def rarity(terms: dict[str, float], candidates: Sequence[Sentence]) -> dict[str, float]:
    """Question terms that few evidence sentences hold weigh more ("passkeys" beside "members", "sign in"):
    the
    sentences that hold them are about what this question asks, not about the topic every passage shares."""
    if len(candidates) < 4:
        return terms
    held = {t: sum(t in c.stems for c in candidates) for t in terms}
    n = len(candidates)
    return {t: w * (1.0 + _RARITY * math.log((n + 1) / (held[t] + 1)) / math.log(n + 1)) if held[t] else w
            for t, w in terms.items()}


@dataclass(frozen=True, slots=True)
class Fixed:
    """What `sentence_gain` reads of a sentence that stays the same while one answer is picked (the question's
    terms, kind, codes and situation are all set before the first round): worked out once per sentence, not in
    every round of the pick."""

    # the question terms it holds (the set as built: summed in its own order, as before)
    hits: AbstractSet[str]
    base: float  # their share of the question's weight
    beyond: frozenset[str]  # its (-ion) stems that are not question terms: what links it to a picked sentence
    typed: bool  # it holds the asked kind of value next to what is asked (`is_typed`, before one is found)
    concludes: bool  # `_concludes`
    others: float  # the bonus for also answering a further question joined by "and"
    length: int  # words
    lead_in: bool  # a list's lead-in ("… as follows:")
    off: bool  # it sets a name against another, or is about another code of the question's family
    restated: bool  # `restates` the question


def fixed_gain(c: Sentence, terms: dict[str, float], total: float, state: PickState,
           kind: re.Pattern[str] | None) -> Fixed:
    hits = terms.keys() & c.stems  # a set in CPython's order either way round (the view's `&` takes both)
    return Fixed(
        hits=hits,
        base=sum(terms[t] for t in hits) / total,
        beyond=_ion_stems(c.text).difference(terms),
        typed=_holds_asked_kind(c, kind, state),
        concludes=_concludes(c, kind, state),
        others=sum(
            0.5 * _CONTEXT_BONUS
            for other, wanted in state.others
            if other.search(c.text) and c.stems & wanted
        ),
        length=len(c.text.split()),
        lead_in=c.text.rstrip(" .").endswith(":"),
        off=contrasts(c) or is_sibling(c, state),
        restated=restates(c.text, state.question) and not answers_no(c.text, state.question_text),
    )


def sentence_gain(c: Sentence, fixed: Fixed, terms: dict[str, float], total: float, state: PickState,
          bridge: dict[int, set[str]]) -> float:
    """What a sentence adds: uncovered question terms, the expected kind of answer, and a link to what was
    picked already (the chain: the sentence after "ERR_4030 means suspended" is about suspension)."""
    new = sum(terms[t] for t in fixed.hits if t not in state.covered) / total
    chain = 0.08 * len(c.stems & bridge.get(c.index, set())) + min(
        0.25, 0.05 * len(fixed.beyond & state.linked)
    )
    typed = _CONTEXT_BONUS if fixed.typed and not state.kind_found else 0.0
    if fixed.concludes:
        typed = 2 * _CONTEXT_BONUS  # the outcome of the asker's own situation is the answer itself
    # A sentence that also answers the second question of "how much … and how many …?" answers both at once.
    typed += fixed.others
    nearby = (
        0.08
        if (c.index, c.position - 1) in state.places or (c.index, c.position + 1) in state.places
        else 0.0
    )
    length = fixed.length
    # A short sentence that holds the asked value ("Idle timeout: 7 days.") is the ideal answer, not a
    # fragment.
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
    return (
        c.weight * (0.4 * fixed.base + 0.8 * new + typed + min(0.24, chain) + nearby + followed)
        + shape
        + c.prior
    )


@dataclass
class PickState:
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
    """The stand-alone numbers of a text ("$700" → 700, "43,200"), not those inside names ("EU-1",
    "ERR_4030")."""
    return {m.group(1).replace(",", "") for m in _NUMBER.finditer(text)}


def situations(question: str, candidates: Sequence[Sentence]) -> tuple[frozenset[tuple[int, int]],
                                                                           frozenset[tuple[int, int]]]:
    """Sentences that retell the asker's situation with the asker's own numbers (a worked example: "A Business
    organization … $700 per month has 60 downtime minutes …"), and the sentences right after them, which say
    what follows for that situation ("… so the credit is 10%, or $70")."""
    given = _numbers(question)
    if len(given) < 2:
        return frozenset(), frozenset()
    retold = frozenset((c.index, c.position) for c in candidates if len(_numbers(c.text) & given) >= 2)
    return retold, frozenset((i, p + 1) for i, p in retold if (i, p + 1) not in retold)


def _concludes(c: Sentence, kind: re.Pattern[str] | None, state: PickState) -> bool:
    """The sentence after a retold situation holds the asked kind of value: the outcome for the asker."""
    return (kind is not None and (c.index, c.position) in state.concluding
            and bool(kind.search(c.text)))


CODE_ID = re.compile(r"\b[A-Z]{2,}[_-]\d+\b")


# "We moved our workspace from EU-1 to AP-1": a change between two named things (upgraded from Team to
# Business).
MOVE = re.compile(r"\bfrom\s+((?-i:[A-Z][\w-]*))\s+to\s+((?-i:[A-Z][\w-]*))", re.IGNORECASE)


def is_sibling(c: Sentence, state: PickState) -> bool:
    """The sentence is about another code of the same family than the question's ("ERR_4221 — Webhook endpoint
    disabled …" for a question about ERR_4031) and does not name the question's own: it answers another
    ticket."""
    text = fold(c.text)
    if (
        state.left
        and any(_word_in(a, text) for a in state.left)
        and not any(_word_in(b, text) for b in state.reached)
    ):
        return True  # it is about what the asker has left ("… for EU-1" after a move from EU-1 to AP-1)
    if not state.codes:
        return False
    found = {fold(m.group(0)) for m in CODE_ID.finditer(c.text)}
    families = {re.split(r"[_-]", code)[0] for code in state.codes}
    return bool(found) and not found & state.codes and any(re.split(r"[_-]", f)[0] in families for f in found)


def _word_in(word: str, text: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def contrasts(c: Sentence) -> bool:
    return _contrast_in(c.text)


@memoised(TEXT_CACHE_SIZE)  # asked of every candidate in every round of the pick
def _contrast_in(text: str) -> bool:
    return bool(_CONTRAST.search(text))


def anchor_terms(question: str, candidates: Sequence[Sentence]) -> set[str]:
    """What the sentences about the question's specific names say besides the question: the resolved
    bridge ("ERR_4030" → organization, suspended; "Sydney" → AP-1, Business), which the answer links to."""
    names = [fold(n) for n in focus_names(question)]
    question_stems = content_stems(question)
    linked: set[str] = set()
    for c in candidates:
        if any(n in fold(c.text) for n in names):
            linked |= content_stems(c.text) - question_stems
    return linked


def is_typed(c: Sentence, kind: re.Pattern[str] | None, state: PickState) -> bool:
    """The sentence holds the kind of answer asked for, next to what is asked about, and none picked so far
    does."""
    return not state.kind_found and _holds_asked_kind(c, kind, state)


def _holds_asked_kind(c: Sentence, kind: re.Pattern[str] | None, state: PickState) -> bool:
    """The sentence holds the kind of answer asked for, next to what is asked about ("90 days" next to
    "data … deleted", not "15 minutes" next to "payment")."""
    return (kind is not None and (bool(c.stems & state.asked) or kind is URL)
            and state.measure <= c.stems and bool(kind.search(c.text)) and not is_sibling(c, state))
