"""Which picked sentence leads a support answer, whatever the knowledge base's style (release notes, price
tables, regional tables, FAQ pairs): each test names the kind of question its rule serves, on made-up text."""

from __future__ import annotations

import pytest

from cli.bench_metrics import first_sentence
from heuristic import lead
from heuristic.absent import asked_action
from heuristic.chains import Sentence
from heuristic.pick_scoring import PickState
from heuristic.synthesis import synthesize_answer
from investigation.state import Evidence, Grade, Route, RouteDecision
from investigation.text import ask_sentence, fold
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")


def _release_notes_and_guide() -> list[Evidence]:
    notes = evidence("notes#3", "Release notes", (
        "Zorbo 3.1 — 2025-04-02: New: payroll export for German companies (Pro plan). "
        "Zorbo 3.1 — 2025-04-02: Changed: the dashboard loads faster."), grade=Grade.AMBIGUOUS, score=0.7)
    guide = evidence(
        "guide#2",
        "Guide: filings",
        (
            "Tax filings are submitted by Zorbo automatically: in Belgium, the monthly return by the 5th; "
            "for Dutch "
            "companies, the quarterly wage filing by the last day of the month after the quarter."
        ),
        score=0.6,
    )
    return [notes, guide]


def test_a_question_whose_kind_is_guessed_from_when_is_led_by_the_sentence_about_what_is_asked() -> None:
    # "When does …" guesses a date: the release-note line holds one, but about shipping a feature.
    question = "When does Zorbo submit the quarterly filing for Dutch companies?"
    answer = synthesize_answer(question, LOOKUP, _release_notes_and_guide())
    assert "last day of the month" in first_sentence(answer.text), answer.text


def test_the_typed_sentence_leads_when_it_is_about_what_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the cover bar the dated line leads (the old behaviour this rule fixes).
    monkeypatch.setattr(lead, "LEAD_TYPED_COVER", 0.0)
    question = "When does Zorbo submit the quarterly filing for Dutch companies?"
    answer = synthesize_answer(question, LOOKUP, _release_notes_and_guide())
    assert "2025-04-02" in first_sentence(answer.text), answer.text


def test_a_yes_no_question_about_a_fee_is_led_by_the_rule_not_a_price_row() -> None:
    # "Do contractors count toward the per-seat fee?": "fee" guesses a price; the price row does not answer.
    pricing = evidence("pricing#1", "Plans and pricing", (
        "Basic: base fee $20; per seat $4; support by e-mail. "
        "Every plan charges a fee per active seat in the month; contractors count as seats."), score=0.8)
    answer = synthesize_answer("Do contractors count toward the per-seat fee?", LOOKUP, [pricing])
    assert "contractors count as seats" in first_sentence(answer.text), answer.text


def test_a_row_labelled_by_the_asked_name_leads_a_sentence_mentioning_it_in_passing() -> None:
    # "How is X done in <name>?" where a table row keyed by the name answers as well as a sentence that
    # mentions the name in passing: the row leads.
    question = "How is the lock toll charged in Maribor?"
    stems = frozenset({"lock", "toll", "maribor"})
    passing = Sentence(0, 0, "Lock tolls are waived on Sundays, but not in Maribor.", stems, 1.0, 0.0)
    row = Sentence(1, 0, "Maribor: toll 2 crowns per boat, 3 crowns after dusk.", stems, 1.0, 0.0)
    state = PickState(covered=set(), linked=set(), places=set(), asked={"lock", "toll", "charg", "maribor"},
                      question=frozenset({"lock", "toll", "charg", "maribor"}), question_text=fold(question))
    terms = {"lock": 1.0, "toll": 1.0, "charg": 1.0, "maribor": 2.0}
    assert lead.lead_of([passing, row], None, state, terms, one_sentence=True) is row


def test_a_value_asked_of_a_described_thing_leads_past_the_sentence_resolving_the_description() -> None:
    # Serves "the <value> for the <thing> that <description>": the sentence resolving the description
    # ("Kiln booking is available on the Gold tier") is the bridge; the Gold tier's own sentence holding the
    # asked relation (a repair response target) is the answer.
    found = [
        evidence("tiers#1", "Studio tiers and features",
                 "Kiln booking is available on the Gold tier; members book up to 3 firings a week."),
        evidence("repairs#1", "Repairs and contact",
                 "Silver: repair response target 2 days. Gold: repair response target 4 hours."),
    ]
    hop = RouteDecision(route=Route.MULTI_HOP, reason="t")
    question = "What's the repair response target for the tier that includes kiln booking?"
    picked = [Sentence(0, 0, found[0].text, frozenset({"kiln", "book", "includ", "tier", "gold", "studio"}),
                       1.0, 0.0),
              Sentence(1, 1, "Gold: repair response target 4 hours.",
                       frozenset({"gold", "repair", "respons", "response", "target", "contact"}), 1.0, 0.0)]
    assert lead.past_bridge(picked[0], picked, question) is picked[1]
    # Nothing past the bridge says more of the relation: the end stays.
    assert lead.past_bridge(picked[0], picked[:1], question) is picked[0]
    assert "4 hours" in first_sentence(synthesize_answer(question, hop, found).text)


def test_a_yes_no_question_said_back_negated_leads_though_the_picks_hold_the_other_side() -> None:
    # Serves "Does X count as Y?" where the knowledge base states the rule both ways: the sentence saying
    # the question's own words negated ("does not count as a late return") is the answer.
    found = [
        evidence("loans#1", "Kiln loans",
                 "Loans beyond 3 days in a month count as a late return. "
                 "Kiln loans booked a week ahead do not count as a late return, up to 3 days a month. "
                 "Late returns are billed at $20 a day."),
    ]
    question = "We kept the kiln over the weekend. Does that count as a late return?"
    answer = synthesize_answer(question, LOOKUP, found).text
    assert "booked a week ahead" in first_sentence(answer), answer
    candidates = [Sentence(0, 0, "Loans beyond 3 days count as a late return.",
                           frozenset({"loan", "count", "late", "return"}), 1.0, 0.0),
                  Sentence(0, 1, "Loans are not free; fees are billed.", frozenset({"loan", "free"}), 1.0,
                           0.0)]
    # A negation that is not of the asked words answers nothing.
    assert lead.negated_answer(question, candidates[:1], candidates) is None


def test_a_q_and_a_faq_is_quoted_without_its_markers_and_never_by_its_questions() -> None:
    # Serves any question answered from an FAQ written as "Q: …?" / "A: …" pairs: the first sentence is the
    # answer, not the FAQ's own question or its "A:" marker.
    faq = evidence("faq#1", "Studio FAQ", (
        "Q: Can I fire glazes at home?\n\nA: Only in kilns rated for 1,200 degrees, with a vent hood.\n\n"
        "Q: Is there a free trial?\n\nA: Yes, 14 days on the Bay tier."))
    answer = synthesize_answer("Can I fire glazes at home in my own kiln?", LOOKUP, [faq]).text
    assert first_sentence(answer).startswith("Only in kilns rated for 1,200 degrees"), answer
    assert "Q:" not in answer and "A:" not in answer


def test_a_yes_no_question_is_not_led_by_a_row_about_another_name() -> None:
    # "Is the Pebble trial limited …?": a row keyed by another plan ("Boulder: everything in Pebble …") shares
    # the question's words but is about Boulder; the sentence about the trial answers.
    question = "Is the Pebble trial limited to a number of seats?"
    stems = frozenset({"pebbl", "trial", "limit", "seat"})
    other = Sentence(0, 0, "Boulder: everything in Pebble, plus a trial of exports and unlimited seats.",
                     stems, 1.0, 0.0)
    trial = Sentence(1, 0, "The trial runs 30 days on the Pebble plan with up to 5 seats.", stems, 1.0, 0.0)
    state = PickState(covered=set(), linked=set(), places=set(), asked={"pebbl", "trial", "limit", "seat"},
                      question=frozenset({"pebbl", "trial", "limit", "seat"}), question_text=fold(question))
    terms = {"pebbl": 2.0, "trial": 1.0, "limit": 1.0, "seat": 1.0}
    assert lead.lead_of([other, trial], None, state, terms, one_sentence=True) is trial
    # a row keyed by a generic label ("Note: …") is no other name's
    note = Sentence(0, 0, "Note: the Pebble trial has a limit of 5 seats.", stems, 1.0, 0.0)
    assert not lead._labelled_elsewhere(note, state) and lead._labelled_elsewhere(other, state)


def test_can_i_still_do_something_is_led_by_the_sentence_saying_the_action() -> None:
    # "Can I still download the receipt?" asks whether the action can be done: the sentence saying it
    # ("Receipts can be downloaded for 120 days …") answers, not one that only names the receipt, however many
    # of the ticket's other words that one shares.
    notes = evidence("receipts#0", "Receipts", (
        "Reissued receipts for old orders are combined into one PDF receipt book per month. "
        "Receipts can be downloaded for 120 days after the order; after that only the order record remains."),
        grade=Grade.CORRECT, score=0.8)
    question = ("I need to reissue a receipt for an order from five months ago. "
                "Can I still download the receipt?")
    answer = synthesize_answer(question, LOOKUP, [notes]).text
    assert "Receipts can be downloaded for 120 days" in first_sentence(answer), answer
    # A verb that only says how something is asked ("get", "use") says no action.
    assert asked_action("Can I still download the receipt?") == "download"
    assert asked_action("Can I get the receipt book?") is None
    assert asked_action("How long are receipts kept?") is None


def test_the_smallest_amount_asked_in_a_ticket_is_led_by_the_value_not_the_codes_sentence() -> None:
    # "What is the smallest amount …?" asks a number as "minimum" does; the digits of the ticket's code
    # ("ZX-4410") are no value, however many of the ticket's words that code's sentence retells.
    refills = evidence("credits#0", "Credits", (
        "ZX-4410 means the credit balance is too low to send the fax; add credits or turn on automatic "
        "refills. If a credit refill fails, sending is paused until the credit balance is positive again. "
        "An automatic refill adds a chosen amount (at least $40) whenever the balance drops below a limit."),
        grade=Grade.CORRECT, score=0.8)
    question = ("Faxes fail with ZX-4410. If I turn on automatic refills, what is the smallest amount each "
                "refill can add?")
    answer = synthesize_answer(question, LOOKUP, [refills]).text
    assert "at least $40" in first_sentence(answer), answer


def test_a_question_asked_inside_a_statement_is_the_asking_sentence() -> None:
    # "Our accountant wants to know how long …" asks, though no sentence ends in "?": the row for the asker's
    # country, holding the duration, leads the general rule that retells more of the ticket's words.
    records = evidence("records#0", "Records retention", (
        "Zorbo keeps payroll records (pay runs, payslips, tax filings) for as long as the law of the "
        "company's country requires, counted from the end of the tax year.\n\n| country | payroll records |"
        "\n|---|---|\n| Germany | 10 years |\n| Ireland | 6 years |"), grade=Grade.CORRECT, score=0.8)
    question = ("We're based in Germany. Our accountant wants to know how long Zorbo holds on to our payroll "
                "history (pay runs, payslips, filings).")
    answer = synthesize_answer(question, LOOKUP, [records]).text
    assert "10 years" in first_sentence(answer), answer
    assert ask_sentence(question).startswith("Our accountant wants to know")
    assert ask_sentence("We moved to AP-1. Please tell us whether the URL changes.").startswith("Please tell")


def test_until_when_is_answered_by_the_deadline_not_the_error_row() -> None:
    # "Until when can we still reverse it?" asks a point in time, which a passage may give as a time of day
    # ("up to 5:00 pm … the day after approval"), said with the asked verb in another form ("reversed").
    question = ("A US customer approved their crate order yesterday, now gets ZB-301 when trying to change "
                "it, and wants it undone. Until when can we still reverse it?")
    found = [
        evidence("errors#0", "Error codes", "ZB-301: The crate order is locked because it was approved; a "
                 "locked crate order cannot be edited; contact support before it ships."),
        evidence("orders#0", "Crate orders", "Once approved, a crate order is locked: it can no longer be "
                 "edited (error ZB-301 if you try). A locked crate order can be reversed only before it "
                 "ships: in the US up to 5:00 pm on the day after approval."),
    ]
    answer = synthesize_answer(question, LOOKUP, found)
    assert "reversed only before it ships" in first_sentence(answer.text)


def test_a_told_leading_clause_is_not_what_one_sentence_asks() -> None:
    # "Since <what happened>, how long until …?" asks in the clause after the comma: the sentence giving the
    # asked length of time leads, not the row of the error code the told clause names.
    question = "Since we started getting ZB-402 on our crate orders, how long until our recipes are deleted?"
    assert ask_sentence(question) == "how long until our recipes are deleted?"
    assert ask_sentence("As a Pro customer, can I export recipes?") == "can I export recipes?"
    assert ask_sentence("Since when is ZB-402 shown?") == "Since when is ZB-402 shown?"
    assert ask_sentence("After the move, why?") == "After the move, why?"  # too little asked after the comma
    found = [
        evidence("errors#0", "Error codes", "ZB-402 — Account paused for non-payment: an Owner must pay the "
                 "open invoices; crate orders resume within 15 minutes of payment."),
        evidence("paused#0", "Paused accounts", "Account paused for non-payment: all recipes are kept, "
                 "read-only, for 90 days from the pause date, then deleted. Crate orders are rejected with "
                 "ZB-402 while the account is paused."),
    ]
    answer = synthesize_answer(question, LOOKUP, found)
    assert "90 days" in first_sentence(answer.text), answer.text



def test_a_length_of_time_in_words_answers_how_long() -> None:
    # "How long does X take?": "from a few minutes to several hours" is a duration as "15 minutes" is.
    from heuristic.kinds import answer_kind

    kind = answer_kind("Once we turn on our own vault key, how long does re-sealing the recipes take?")
    assert kind is not None
    for said in ("this takes from a few minutes to several hours", "within two weeks", "a couple of days",
                 "15 minutes"):
        assert kind.search(said), said
    assert not kind.search("a day pass") and not kind.search("the hours of support")
