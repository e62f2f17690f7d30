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

import re
from collections.abc import Sequence

from heuristic.acronyms import spelled_out
from heuristic.chains import Sentence, chain_end, is_name, named_in
from heuristic.exclusions import excluded_case
from heuristic.focus import focus_names
from heuristic.kinds import answer_kind, answer_kinds, focus_terms, measure_of
from heuristic.lead import (
    Composition,
    answers,
    comparison,
    join_first,
    labelled_as_asked,
    lead_of,
    negated_answer,
    past_bridge,
)
from heuristic.mentions import base_title
from heuristic.partial import partial_question, with_missing
from heuristic.pick_scoring import (
    CODE_ID,
    FOLLOW,
    MOVE,
    TOOL_RECORD_PRIOR,
    TYPED_SHARE,
    Fixed,
    PickState,
    anchor_terms,
    candidate_sentences,
    content_stems,
    fixed_gain,
    is_sibling,
    is_typed,
    question_terms,
    rarity,
    sentence_gain,
    situations,
    terms_of,
)
from heuristic.premises import correction
from heuristic.records import document_rule, own_value
from heuristic.router import compared_entities
from heuristic.sequence import next_steps
from heuristic.sufficiency import has_support, unsupported_names
from heuristic.thresholds import deciding_limit, verdict_prefix
from investigation.answers import refusal
from investigation.citations import cite
from investigation.state import Answer, Evidence, Grade, Route, RouteDecision
from investigation.text import ask_sentence, fold

DIRECT_REPLY = ("Hello! I'm Sleuth. Ask me a question about your knowledge base and I will investigate it "
                "and answer with citations.")
_THANKS_REPLY = "You're welcome! Ask me anything else about your knowledge base whenever you need."
_SORRY_REPLY = "No problem at all! Ask me anything about your knowledge base whenever you are ready."
_BOT_REPLY = ("I'm Sleuth, an automated assistant. Ask me a question about your knowledge base and I will "
              "investigate it and answer with citations.")
_BYE_REPLY = "You're welcome, glad it helped! Have a good one, and ask me anything whenever you need."
def direct_answer(question: str) -> Answer:
    """A friendly reply to a greeting or chit-chat, without retrieval or citations."""
    lowered = fold(question)
    if re.search(r"\b(bot|robot|human|real person|ai|machine|who are you|what can you do)\b", lowered):
        return Answer(text=_BOT_REPLY)
    if re.search(r"\b(sorry|apolog)", lowered):
        return Answer(text=_SORRY_REPLY)
    if re.search(r"\b(close|bye|goodbye|weekend|have a)\b", lowered) and re.search(
            r"\b(thank|thx|cheers|close|bye|great|perfect)", lowered):
        return Answer(text=_BYE_REPLY)
    if re.search(r"\b(thank|thx|ty|cheers|appreciat|fixed|solved|worked)", lowered):
        return Answer(text=_THANKS_REPLY)
    return Answer(text=DIRECT_REPLY)


def _pick(
    question: str, route: RouteDecision, evidence: Sequence[Evidence], max_sentences: int
) -> Composition:
    candidates = candidate_sentences(question, evidence)
    terms = question_terms(question)
    if route.route is not Route.MULTI_HOP:
        # Not along a chain: there the question's rare words name its far end, and weighting them (or reading
        # "US" as "United States") pulls the answer off the chain's last link (it lowered MuSiQue's answers).
        candidates = spelled_out(question, candidates)
        terms = rarity(terms, candidates)
    kind = answer_kind(question)
    question_stems = set(terms)
    bridge = {i: content_stems(e.query) - question_stems for i, e in enumerate(evidence)}
    picked: list[Sentence] = []
    state = PickState(covered=set(), linked=anchor_terms(question, candidates), places=set(),
                   asked=set(terms_of(ask_sentence(question))), question=frozenset(content_stems(question)),
                   question_text=fold(question),
                   titles=tuple(fold(base_title(e.title)).strip() for e in evidence),
                   named=tuple(is_name(e.title) for e in evidence), focus=frozenset(focus_terms(question)),
                   measure=frozenset(measure_of(question)),
                   follow=FOLLOW if route.route is Route.MULTI_HOP else 0.0)
    state.situation, state.concluding = situations(question, candidates)
    state.codes = frozenset(fold(m.group(0)) for m in CODE_ID.finditer(question))
    moves = [(fold(m.group(1)), fold(m.group(2))) for m in MOVE.finditer(question)]
    state.left, state.reached = frozenset(a for a, _b in moves), frozenset(b for _a, b in moves)
    state.others = tuple(
        (k, frozenset(terms_of(clause))) for clause, k in answer_kinds(question)[1:] if k is not None
    )

    def take(c: Sentence) -> None:
        picked.append(c)
        state.said += " " + fold(c.text)
        state.covered.update(c.stems)
        state.linked.update(content_stems(c.text) - question_stems)
        state.places.add((c.index, c.position))
        state.kind_found = state.kind_found or is_typed(c, kind, state)

    total = sum(terms.values()) or 1.0
    fixed: dict[int, Fixed] = {}  # by id(): the candidates live as long as the pick

    def gain(c: Sentence) -> float:
        known = fixed.get(id(c))
        if known is None:
            known = fixed[id(c)] = fixed_gain(c, terms, total, state, kind)
        return sentence_gain(c, known, terms, total, state, bridge)

    entities = compared_entities(question) if route.route is Route.MULTI_PART else []
    sides: list[Sentence] = []  # one sentence per compared entity, in the question's order
    for name in entities:
        key = fold(name)
        stems = content_stems(name)
        # A sentence naming the entity, or one under its heading ("## Team" → "Price: $15 per seat …").
        holders = [
            c for c in candidates if c not in picked and (key in fold(c.text) or (stems and stems <= c.stems))
        ] or [c for c in candidates if c not in picked and key in fold(evidence[c.index].title)]
        if holders:  # a sentence about the entity ("Business: …") rather than one mentioning it
            # One that holds the asked kind of value ("EUR €1.90" for a price in euros) before one that does
            # not.
            side = max(
                holders,
                key=lambda c: (
                    kind is not None and bool(kind.search(c.text)),
                    gain(c) + _about_bonus(c, key, stems, fold(evidence[c.index].title)),
                ),
            )
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
            first = value - (TOOL_RECORD_PRIOR if evidence[best.index].source_id.startswith("tool:") else 0.0)
        if picked and (value < 0.12 or value < 0.4 * first):
            break
        take(best)
    if (
        kind is not None
        and picked
        and first is not None
        and not any(answers(c, kind, state, terms)[0] for c in picked)
    ):
        # Nothing picked holds the asked kind of value: the best sentence that does, when it is nearly as
        # good, answers the question ("within 30 days after …" for "by when"), the rest only surrounds it.
        typed = [c for c in candidates if c not in picked and answers(c, kind, state, terms)[0]
                 and not is_sibling(c, state) and (not state.focus or c.stems & state.focus)]
        best_typed = max(typed, key=lambda c: (fresh[id(c)], -c.index, -c.position), default=None)
        if best_typed is not None and fresh[id(best_typed)] >= TYPED_SHARE * first:
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
    # A yes/no question's asked word negated, else what the asking sentence asks for given under its own label
    # ("Workaround: …" for "Is there a workaround?"), is part of the answer however few other words it shares.
    added = negated_answer(question, picked, candidates) if picked and not entities else None
    if added is None and picked and not entities:
        added = next((c for c in candidates if c not in picked and labelled_as_asked(c, state)), None)
    if added is not None:
        if len(picked) >= max_sentences:
            picked.pop()
        take(added)
    if len(sides) >= 2 and len(sides) == len(entities):
        return comparison(question, entities, sides, picked, candidates, evidence)
    end = chain_end(picked, candidates, state.chain, kind, terms) if route.route is Route.MULTI_HOP else None
    if end is not None and kind is not None and not kind.search(end.text) and any(
            answers(c, kind, state, terms)[0] for c in picked):
        end = None  # a picked sentence already holds the asked kind of value; this link adds nothing
    if end is not None and not state.named[end.index]:
        end = past_bridge(end, picked, question)
    if end is not None and end not in picked:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(end)
    rule = document_rule(question, picked, candidates, evidence, question_stems)
    if rule is not None:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(rule)
    own = own_value(question, kind, picked, candidates, evidence)
    if own is not None and own not in picked:
        if len(picked) >= max_sentences:
            picked.pop()
        picked.append(own)
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
            namer = next(
                (
                    c
                    for c in picked
                    if c.index != end.index and named_in(fold(c.text), state.titles[end.index])
                ),
                None,
            )
            if namer is not None:
                picked.remove(namer)
                picked.insert(0, namer)
        lead = lead_of(pool, kind, state, terms,
                       one_sentence=ask_sentence(question).strip() == question.strip())
        if own is not None and end is None:
            lead = own  # the asker's own value, from their record, before any article's general one
        # "… failed twice. What happens next?": what follows the told situation leads; "A debit of $30,000
        # failed. Can …?": the limit that decides it does; "… ordered gift cards … Will the claim be paid?":
        # the rule leaving them out does.
        steps = [] if end else next_steps(question, candidates)
        step = steps[0] if steps else (
            None if end else deciding_limit(question, candidates) or excluded_case(question, candidates))
        if len(steps) > 1:
            # Along a numbered sequence the step and the items after it are the whole answer: the retelling
            # and sentences on other topics say nothing about what happens next.
            picked[:] = steps[:max_sentences]
            lead = steps[0]
        elif step is not None:
            if step in picked:
                picked.remove(step)
            elif len(picked) >= max_sentences:
                picked.pop()
            picked.insert(0, step)
            lead = step
        picked.remove(lead)
        picked.insert(0, lead)
        corrected = correction(question, candidates)
        if corrected is not None and corrected != lead:  # a false premise: its correction first
            if corrected in picked:
                picked.remove(corrected)
            elif len(picked) >= max_sentences:
                picked.pop()
            picked.insert(0, corrected)
            # The correction and the answer in one first sentence ("There is no Pebble tier [1]; drafts are
            # kept for 45 days [2]."): a reader of the first sentence alone gets both.
            joined = 2 if len(picked) > 1 and picked[1] is lead else 1
            return Composition(picked, joined=joined, prefix=verdict_prefix(question, corrected.text))
        return Composition(picked, prefix=verdict_prefix(question, lead.text))
    return Composition(picked)


def _about_bonus(c: Sentence, key: str, stems: set[str], title: str) -> float:
    """How plainly a sentence is about a compared entity: it starts with its name ("Business: …"), opens the
    entity's own passage, or sits under the entity's heading in another document ("## Team" → "Price: …")."""
    text = fold(c.text)
    if text.startswith(key):
        return 0.3
    if key in title:
        return 0.2 if c.position == 0 else 0.0
    return 0.15 if key not in text and stems <= c.stems else 0.0


def _repeats(c: Sentence, picked: Sequence[Sentence]) -> bool:
    """A sentence that says (nearly) what a picked one says."""
    return any(len(c.stems & p.stems) >= 0.8 * max(1, min(len(c.stems), len(p.stems))) for p in picked)


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
        # A value asked of a member the knowledge base does not know ("… on the Starter plan?"): the value
        # for the question without it, then what is missing (`heuristic.partial`).
        partial = None if route.route is Route.OUT_OF_CORPUS else partial_question(question, absent, evidence)
        if partial is not None and has_support(partial.question, evidence):
            known = synthesize_answer(partial.question, route, evidence, max_sentences - 1)
            if not known.refused:
                return Answer(text=with_missing(known.text, partial), citations=known.citations,
                              caveat=known.caveat)
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
    head = join_first(cited[: composition.joined])
    text = " ".join([composition.prefix + head if composition.prefix else head, *cited[composition.joined:]])
    weak = not any(evidence[i].grade is Grade.CORRECT for i in used)
    return Answer(text=text, citations=citations,
                  caveat="the supporting evidence is weak; verify before relying on it" if weak else None)
