"""Reworded questions (issue 44's paraphrase probe): the same question asked in other generic support words
or inflections, on made-up text. Each test names the kind of question its rule serves."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristic import lead
from heuristic.chains import Sentence
from heuristic.grader import grade_passages, standing_for
from heuristic.kinds import answer_kind
from heuristic.pick_scoring import PickState
from heuristic.verdicts import yes_no_prefix
from investigation.text import content_stems, fold
from tests.unit.investigation.fakes import passage


def _no_embedding(texts: Sequence[str]) -> np.ndarray:
    # Lexical agreement alone decides: what is tested is which words agree.
    return np.zeros((len(texts), 8), dtype=np.float32)


def _lexical(question: str, text: str) -> float:
    return grade_passages(question, [passage("p#0", "Zorbo hosting", text)], 1, {}, _no_embedding)[0].score


def test_where_data_is_stored_agrees_with_a_passage_saying_where_it_is_hosted() -> None:
    # "Where is X stored?" over a passage that says "hosted": the same generic vocabulary.
    text = "Companies in the EU are hosted in Lyon; companies in Canada in Toronto."
    stored = _lexical("Where is the companies' data stored?", text)
    assert stored > _lexical("Where is the companies' data painted?", text)


def test_how_often_something_fails_is_not_graded_against() -> None:
    # "My X fails every time at Y - why?": the frequency is the asker's, not the passage's.
    text = "Badge printing fails at the kiosk when the ribbon is empty."
    every = _lexical("My badges fail every time at the kiosk - why?", text)
    assert every == _lexical("My badges fail at the kiosk - why?", text)


def test_money_back_agrees_with_a_refund_and_without_a_mapping_with_unmapped() -> None:
    # "Can we get our money back?" over the refund policy; "items without a mapping" over "unmapped items".
    assert _lexical("Can we get our money back?", "A full refund is given within 10 days.") > 0
    assert _lexical("Where do items without a mapping go?", "Unmapped items go to the holding ledger.") > (
        _lexical("Where do items without a colour go?", "Unmapped items go to the holding ledger."))


def test_a_minimum_says_the_smallest_a_question_asks() -> None:
    # "What's the smallest amount …?": a sentence saying "the minimum" holds the asked word for the pick.
    asked = content_stems("What's the smallest top-up?")
    question = "What's the smallest top-up?"
    assert standing_for(question, asked, content_stems("The minimum top-up is 5 crowns.")) == {"smallest"}
    assert standing_for(question, asked, content_stems("Top-ups are instant.")) == set()
    # "Can we get our money back?": a sentence about a refund says it.
    money = "Can we get our money back?"
    said = standing_for(money, content_stems(money), content_stems("A full refund is given within 10 days."))
    assert said == content_stems("money back")
    # "Where do items without a mapping go?": "unmapped items" say it.
    items = "Where do items without a mapping go?"
    unmapped = content_stems("Unmapped items go to the ledger.")
    assert standing_for(items, content_stems(items), unmapped) == content_stems("mapping")


def test_switching_something_back_on_or_off_is_enabling_or_disabling_it() -> None:
    # "Where do we switch the hook back on?" over "re-enable a disabled hook": the verb and "back" are said,
    # the object ("hook") is still graded as asked.
    back_on = "Where do we switch the hook back on?"
    text = "You can re-enable a disabled hook from Settings."
    assert standing_for(back_on, content_stems(back_on), content_stems(text)) == content_stems("switch back")
    assert _lexical(back_on, text) > _lexical("Where do we paint the hook back?", text)
    assert _lexical(back_on, "Hooks are signed with a secret.") < _lexical(back_on, text)
    turn_off = "How do I turn the badge sounds off?"
    said = standing_for(turn_off, content_stems(turn_off), content_stems("Disable badge sounds in Settings."))
    assert said == content_stems("turn")


def test_events_gone_or_lost_agree_with_a_passage_saying_they_are_dropped_and_look_at_with_view() -> None:
    # "Are the streamed events gone?" over "buffered events are dropped after 72 hours"; "Who can look at the
    # ledger?" over "Only Owners can view it".
    dropped = "After 72 hours, buffered events are dropped from the stream."
    assert _lexical("Our collector was down. Are the streamed events gone?", dropped) > (
        _lexical("Our collector was down. Are the streamed events blue?", dropped))
    lost = _lexical("Were the streamed events lost?", dropped)
    assert lost > _lexical("Were the streamed events red?", dropped)
    view = "Only Owners and Admins can view the ledger."
    asked = "Who in our team can look at the ledger?"
    assert standing_for(asked, content_stems(asked), content_stems(view)) == content_stems("look")
    assert _lexical(asked, view) > _lexical("Who in our team can paint at the ledger?", view)


def test_a_change_that_applies_agrees_with_one_that_takes_effect() -> None:
    # "How long until it applies in every region?" over "Changes take effect within 2 minutes in all regions".
    text = "Changes take effect within 2 minutes in all regions."
    asked = "After we save a change to the badge list, how long until it applies everywhere?"
    assert standing_for(asked, content_stems(asked), content_stems(text)) == content_stems("applies")
    assert _lexical(asked, text) > _lexical(asked.replace("applies", "sparkles"), text)


def test_a_phrasal_verb_is_said_closed_up_and_apart() -> None:
    # "For how long can they still log in?": a sentence about the "login" says what is asked, and "… sign
    # up …" in a sentence says a question's "signup"; a verb without its particle says neither.
    question = "Our interns want their badges. For how long can they still log in?"
    asked = content_stems(question)
    login = "A former intern's badge login ends 3 weeks after their last day."
    assert standing_for(question, asked, content_stems(login), login) == content_stems("log")
    logbook = "The badge logbook is kept for 3 weeks."
    assert standing_for(question, asked, content_stems(logbook), logbook) == set()
    closed = "When does the signup close?"
    apart = "Interns sign up through the portal until March."
    assert standing_for(closed, content_stems(closed), content_stems(apart), apart) == {"signup"}
    assert standing_for(closed, content_stems(closed), content_stems("Interns sign the form."),
                        "Interns sign the form.") == set()


def test_yes_when_the_lead_says_the_asked_words_in_another_inflection() -> None:
    # "Is X an option for paying invoices in EUR?" over "… collected after the invoice date": the Yes does
    # not depend on the question's inflections matching the lead's.
    question = "Is GIRO bank transfer an option for paying invoices in SEK?"
    lead_text = "GIRO bank transfer: currencies SEK only; collected 3 days after the invoice date."
    assert yes_no_prefix(question, lead_text) == "Yes: "
    assert yes_no_prefix("Is GIRO transfer an option for paying invoices in SEK?",
                         "Cards are accepted in every currency.") == ""


def test_a_row_labelled_by_the_asked_name_leads_a_sentence_sharing_more_other_words() -> None:
    # "In <name>, which X …?": the row keyed by the name answers; a sentence holding more of the question's
    # other words and the name in passing does not, when the row is about the question nearly as much.
    question = "In Maribor, which toll do boats pay to the lock keepers?"
    row = Sentence(1, 0, "Maribor: toll 2 crowns per boat, paid at the gate.",
                   frozenset({"maribor", "toll", "boat"}), 1.0, 0.0)
    passing = Sentence(0, 0, "Boats pay extra at the lock in Maribor.",
                       frozenset({"lock", "boat", "pay", "maribor"}), 1.0, 0.0)
    asked = {"maribor", "toll", "boat", "pay", "lock", "keeper"}
    state = PickState(covered=set(), linked=set(), places=set(), asked=asked, question=frozenset(asked),
                      question_text=fold(question))
    terms = {"maribor": 2.0, "toll": 1.0, "boat": 1.0, "pay": 1.0, "lock": 1.0, "keeper": 1.0}
    assert lead.lead_of([passing, row], None, state, terms, one_sentence=True) is row


def test_a_yes_no_question_is_not_led_by_the_name_s_row() -> None:
    # "Do <name> customers get X?": the sentence saying whether answers, not the name's row of values.
    question = "Do Bronze customers get phone support?"
    row = Sentence(1, 0, "Bronze customers: channels e-mail, chat; first reply within 1 day.",
                   frozenset({"bronze", "customer", "channel", "chat"}), 1.0, 0.0)
    says = Sentence(0, 0, "Phone support is not offered on Bronze.",
                    frozenset({"phone", "support", "bronze"}), 1.0, 0.0)
    asked = {"bronze", "customer", "phone", "support"}
    state = PickState(covered=set(), linked=set(), places=set(), asked=asked, question=frozenset(asked),
                      question_text=fold(question))
    terms = {"bronze": 4.0, "customer": 1.0, "phone": 1.0, "support": 1.0}
    assert lead.lead_of([row, says], None, state, terms, one_sentence=True) is says



def test_a_yes_no_question_is_led_by_the_sentence_saying_whether_not_the_value_its_noun_guesses() -> None:
    # "Are contractors included in the per-seat fee?": "fee" guesses a price, but a price row about the
    # question nearly as much as the rule does not answer whether; the sentence most about it leads.
    question = "Are contractors included in the per-seat fee?"
    row = Sentence(1, 0, "Basic: base fee $20; per seat $4.", frozenset({"fee", "per", "seat", "basic"}),
                   1.0, 0.0)
    rule = Sentence(0, 0, "Every plan charges a fee per active seat; contractors count as seats.",
                    frozenset({"fee", "per", "seat", "contractor", "plan"}), 1.0, 0.0)
    asked = {"contractor", "includ", "per", "seat", "fee"}
    state = PickState(covered=set(), linked=set(), places=set(), asked=asked, question=frozenset(asked),
                      question_text=fold(question), measure=frozenset())
    terms = {t: 1.0 for t in asked}
    kind = answer_kind(question)
    assert kind is not None and kind.search(row.text)
    assert lead.lead_of([row, rule], kind, state, terms, one_sentence=True) is rule
