"""Which picked sentence leads an answer: the one that answers the asking sentence (`answers`), so that the
first sentence holds the value, the yes/no or the step that was asked for; for a comparison, both sides in
one first sentence (`comparison`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.absent import asked_action
from heuristic.chains import Sentence
from heuristic.kinds import URL
from heuristic.pick_scoring import BOTH, PickState, content_stems, contrasts, is_sibling, restates, terms_of
from heuristic.verdicts import about as verdict_about
from heuristic.verdicts import answers_no, both_verdict, broad_names, is_yes_no, temporal_winner
from investigation.state import Evidence
from investigation.text import ask_sentence, fold, words


def answers(c: Sentence, kind: re.Pattern[str] | None, state: PickState,
            terms: dict[str, float]) -> tuple[bool, bool, bool, bool, float]:
    """How well a picked sentence answers the asking sentence: it holds the expected kind of value next to
    the asked terms, it neither restates the question nor sets a name against another, and it covers the
    asked terms (weighted) with something the question did not already say."""
    # A silent final "e" the stemmer keeps on one form and drops on another ("reverse" / "reversed").
    asked = c.stems & state.asked or {t for t in state.asked if t.endswith("e") and t[:-1] in c.stems}
    typed = (kind is not None and (bool(asked) or kind is URL) and state.measure <= c.stems
             and bool(kind.search(c.text)) and not is_sibling(c, state))
    # A yes/no question answered No by its own words negated ("… is not available on X") is not restated,
    # and the negation is what it adds.
    no = answers_no(c.text, state.question_text)
    restated = restates(c.text, state.question) and not no
    clean = (not restated and not contrasts(c) and not is_sibling(c, state)
             and (c.index, c.position) not in state.situation)
    concludes = (c.index, c.position) in state.concluding and kind is not None and bool(kind.search(c.text))
    novel = no or bool(content_stems(c.text) - state.question)
    total = sum(terms.values()) or 1.0
    cover = (
        sum(terms.get(t, 0.0) for t in asked) / total + 0.5 * sum(terms.get(t, 0.0) for t in c.stems) / total
    )
    return typed, clean, concludes, novel, round(cover + 0.001 * c.weight, 6)


# Any question whose asked kind is guessed from one word ("when" → a date, "fee" → a price, "where … in Xero"
# → a place): a sentence holding that kind leads only when it is about what is asked nearly as much as the
# best picked sentence. A release-note line dated "2026-01-14" about another feature, or a price-table row for
# "do contractors count toward the fee?", holds the kind but not the answer.
LEAD_TYPED_COVER = 0.7


def lead_of(pool: Sequence[Sentence], kind: re.Pattern[str] | None, state: PickState,
            terms: dict[str, float], *, one_sentence: bool) -> Sentence:
    """The picked sentence that best answers the asking sentence (`answers`); in a one-sentence question a
    typed
    one only when its cover is at least `LEAD_TYPED_COVER` of the best cover in `pool`."""
    scored = [(c, answers(c, kind, state, terms)) for c in pool]
    ask = ask_sentence(state.question_text)
    # "Do you verify X, or only Y?" asks which of two, not whether: a denial is no answer to it by itself.
    alternative = _ALTERNATIVE.search(ask) is not None
    denied = set() if alternative else {id(c) for c in pool if denies(c, state.question_text)}
    # In a ticket ("… returns ERR_4013 - how much …?") the situation's words fill the cover of every sentence
    # retelling it: there the asked kind alone says which sentence answers.
    ticket = not one_sentence or bool(state.codes) or bool(state.situation)
    best = max(a[4] for _c, a in scored)
    yes_no = is_yes_no(ask)
    # A yes/no question asks whether, not the value its noun guesses ("Are contractors included in the fee?"
    # is no price): a sentence holding that kind leads it only when no other is more about the question.
    bar = 0.0 if ticket else best if yes_no else LEAD_TYPED_COVER * best
    # Between sentences that answer equally well, a row or item labelled by a name the question says
    # ("California: 1.5× over 8 hours …" for "How is overtime calculated in California?") leads.
    # A yes/no question's asked word negated ("… are never eligible" for "Is it eligible …?") is its answer,
    # No, however many of the question's other words a sentence next to it holds.
    # A row labelled by the question's name ("Australia: bank rail …" for "In Australia, which bank rail …?")
    # is that name's own answer: it leads a sentence that only shares more of the question's other words
    # ("… payment … employees … A$750 in Australia"), when about the question nearly as much. Not for a
    # yes/no question, answered by the sentence saying whether, not by the name's row of values.
    row_bar = math.inf if yes_no else LEAD_TYPED_COVER * best
    # "Is there a workaround …?" asks for the thing itself: the sentence under that label ("Workaround: …")
    # says there is one and what it is, however few of the ticket's other words it shares.
    exists = _ASKS_EXISTENCE.search(ask) is not None
    # "Can I still download the PDF?" asks whether the action can be done: a sentence saying the action
    # ("PDFs can be downloaded for 90 days") is about it; one sharing only its object ("… one PDF …") is not.
    acted = asked_action(state.question_text)
    return max(scored, key=lambda ca: (ca[1][0] and ca[1][4] >= bar,
                                       not (yes_no and _labelled_elsewhere(ca[0], state)),
                                       *ca[1][1:3], id(ca[0]) in denied,
                                       acted is not None and acted in ca[0].stems,
                                       _labelled(ca[0], state) and (
                                           ca[1][4] >= row_bar or exists and labelled_as_asked(ca[0], state)),
                                       *ca[1][3:], _labelled(ca[0], state)))[0]


# The second of two alternatives asked as a clause of its own: "…, or only the format?", "… or is it …?".
_ALTERNATIVE = re.compile(r",\s*or\b|\bor\s+(?:only|just|rather|instead|is|are|do|does|did|will|would|can|"
                          r"could|should)\b", re.IGNORECASE)
# "Is there a / an / any X …?", "Are there any X …?": whether X exists, answered by X.
_ASKS_EXISTENCE = re.compile(r"^\s*(?:is|are)\s+there\s+(?:a|an|any)\b", re.IGNORECASE)


def denies(c: Sentence, question: str) -> bool:
    """The sentence answers a yes/no question No (`answers_no`) with the negation right before one of the
    asking sentence's words ("never eligible", "not refundable"), not somewhere else in it."""
    asked = content_stems(ask_sentence(question))
    return answers_no(c.text, question) and any(
        content_stems(m.group(1)) & asked for m in _NEGATED.finditer(c.text))


def _label_of(c: Sentence) -> str:
    """What the sentence opens with before a colon ("California" of "California: 1.5× over …"), or ""."""
    colon = c.text.find(":")
    return c.text[:colon] if 0 < colon <= 40 else ""


def _labelled(c: Sentence, state: PickState) -> bool:
    """The sentence opens with a label ("California: …") that the question names."""
    label = fold(_label_of(c)).strip()
    return len(label) >= 3 and re.search(rf"\b{re.escape(label)}\b", state.question_text) is not None


def labelled_as_asked(c: Sentence, state: PickState) -> bool:
    """The sentence opens with a one-word label that is a word the asking sentence asks about ("Workaround:
    regenerate …" for "Is there a workaround I can give them?")."""
    label = words(_label_of(c))
    if len(label) != 1 or len(label[0]) <= 3:
        return False
    asked = terms_of(label[0])  # in the asked terms' own form ("-ion" nouns as their verbs)
    return bool(asked) and asked.keys() <= state.asked


# Labels that head a note or an item, not a thing of the knowledge base's own ("Note: …", "Step 2: …").
_GENERIC_LABELS = frozenset(["note", "notes", "tip", "example", "examples", "warning", "important", "q", "a",
                             "step", "why", "how", "what", "see", "also", "related", "fix", "cause"])


def _labelled_elsewhere(c: Sentence, state: PickState) -> bool:
    """The sentence opens with a name the question does not say ("Scale: everything in Growth, plus …" for
    "Is the Growth trial limited …?"): a row about another plan, region or country."""
    head = _label_of(c)
    names = head.split()
    if not names or len(names) > 3 or not head[0].isupper() or fold(names[0]) in _GENERIC_LABELS:
        return False
    return re.search(rf"\b{re.escape(fold(head).strip())}\b", state.question_text) is None


@dataclass(frozen=True)
class Composition:
    """The sentences of the answer in order; the first `joined` of them form its first sentence (both sides
    of a comparison), after `prefix` ("Yes: ", "No: ")."""

    sentences: list[Sentence]
    joined: int = 1
    prefix: str = ""


def comparison(question: str, entities: Sequence[str], sides: list[Sentence], picked: list[Sentence],
                candidates: Sequence[Sentence], evidence: Sequence[Evidence]) -> Composition:
    """Both sides in the first sentence: "Yes: …; …" when both entities have what a yes/no question asks,
    "No: …; …" when one lacks it; for "which came first" the earlier entity's sentence leads."""
    sentences = [(c.text, evidence[c.index].title) for c in candidates]
    about = [verdict_about(name, sentences) for name in entities]
    prefix = ""
    order = list(sides)
    if is_yes_no(question) and BOTH.search(ask_sentence(question)):
        verdict = both_verdict(question, entities, about, broad_names([e.text for e in evidence]))
        prefix = "" if verdict is None else ("Yes: " if verdict else "No: ")
    else:
        winner = temporal_winner(question, about)
        if winner is not None:
            order.insert(0, order.pop(winner))
    rest = [c for c in picked if c not in order]
    return Composition(order + rest, joined=len(order), prefix=prefix)


def join_first(sentences: Sequence[str]) -> str:
    """Cited sentences as one: "A [1]; B [2]." (both sides of a comparison in the first sentence)."""
    if len(sentences) <= 1:
        return "".join(sentences)
    parts = [s.rstrip()[:-1] if s.rstrip()[-1:] in ".!?" else s.rstrip() for s in sentences]
    return "; ".join(parts) + "."


# A description inside the asking sentence: "the plan that includes SSO", "the region where …".
_DESCRIPTION = re.compile(r"\b(?:that|which|who|whose|where)\b[^,;?]*", re.IGNORECASE)
_CAPITALISED = re.compile(r"\b[A-Z][\w-]+")
_NEGATED = re.compile(
    r"\b(?:not|never|cannot|can't|isn't|aren't|doesn't|don't|won't)\s+((?:[\w-]+\s+)?[\w-]+)", re.IGNORECASE)


def past_bridge(end: Sentence, picked: Sequence[Sentence], question: str) -> Sentence:
    """The end of a support chain, one step past the sentence that resolves the question's description.

    Serves a question that describes a thing and asks a value of it ("What's the support response target
    for the plan that includes SSO?"): the chain's end found may be the sentence resolving the description
    ("SSO is available on the Scale plan"); a picked sentence naming what it introduces ("Scale: … first
    response target 1 business hour") that says more of the asked relation (the asking sentence without
    its descriptions) is the answer. `end` itself otherwise."""
    relation = content_stems(_DESCRIPTION.sub(" ", ask_sentence(question)))
    asked = fold(question)
    introduced = {w for w in _CAPITALISED.findall(end.text) if fold(w) not in asked}
    said = len(end.stems & relation)
    further = [c for c in picked if c.index != end.index and len(c.stems & relation) > said
               and any(re.search(rf"\b{re.escape(w)}\b", c.text) for w in introduced)]
    return max(further, key=lambda c: len(c.stems & relation), default=end)


def negated_answer(question: str, picked: Sequence[Sentence],
                   candidates: Sequence[Sentence]) -> Sentence | None:
    """A sentence saying all of a yes/no question's words with a negation ("Scheduled maintenance … does not
    count as downtime for the SLA" for "Does that count as downtime for our SLA?"), when no picked sentence
    does: it is the answer, No, in the question's own terms. Serves yes/no questions about one thing
    (never "X or Y?"), whose picks may hold only the rule's other side ("… beyond 4 hours counts as …")."""
    ask = ask_sentence(question)
    asked = content_stems(ask)
    if not is_yes_no(ask) or " or " in fold(ask) or len(asked) < 2:
        return None

    def says(c: Sentence) -> bool:  # the negation right before an asked word ("does not count as …")
        return asked <= content_stems(c.text) and answers_no(c.text, question) and any(
            content_stems(m.group(1)) & asked for m in _NEGATED.finditer(c.text))

    if any(says(c) for c in picked):
        return None
    return max((c for c in candidates if says(c)), key=lambda c: (c.weight, c.prior), default=None)
