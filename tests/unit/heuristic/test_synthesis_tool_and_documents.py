"""A question that needs a fact from a tool's record and a rule from the documents gets both, cited."""

from __future__ import annotations

from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
ORDER = evidence("tool:order_lookup:ab12", "Order BC-204117, fetched 08:00",
                 "Order BC-204117 is delayed; estimated delivery 2026-12-14. Order BC-204117 ships with DHL, "
                 "tracking number JD0146000. Order BC-204117 holds 1 x Coffee beans. The total of order "
                 "BC-204117 is 35 EUR.")
REFUNDS = evidence(
    "delays#0",
    "Delayed orders and refunds",
    "When an order is delayed past its estimated delivery date, you can ask for a refund of the "
    "shipping cost under Orders, Help with this order.",
)


def test_the_record_and_the_rule_are_both_cited() -> None:
    answer = synthesize_answer("My order BC-204117 is delayed. Can I get a refund?", LOOKUP, [ORDER, REFUNDS])
    assert "delayed" in answer.text and "refund of the shipping cost" in answer.text
    assert {c.source_id for c in answer.citations} == {"tool:order_lookup:ab12", "delays"}


def test_a_record_that_answers_everything_stands_alone() -> None:
    answer = synthesize_answer("What is the tracking number of order BC-204117?", LOOKUP, [ORDER, REFUNDS])
    assert "JD0146000" in answer.text
    assert {c.source_id for c in answer.citations} == {"tool:order_lookup:ab12"}


SHIPPED = evidence("tool:order_lookup:cd34", "Order BC-1042, fetched 08:00",
                   "Order BC-1042 is shipped; estimated delivery 2026-12-08. Order BC-1042 ships with UPS, "
                   "tracking number 1Z999AA10123.")
# The articles no record is named in grade low against a question naming the asker's order.
CANCELLING = evidence(
    "cancel#0",
    "Cancelling an order",
    "An order can be cancelled free of charge while it is processing. Once an order has shipped "
    "it can no longer be cancelled; return it after delivery instead.",
    grade=Grade.INCORRECT,
    score=0.39,
)


def test_a_rule_the_asker_asks_for_joins_the_record_however_the_article_was_graded() -> None:
    answer = synthesize_answer("Can I cancel order BC-1042 or is it too late?", LOOKUP, [SHIPPED, CANCELLING])
    assert answer.text.startswith("Order BC-1042 is shipped")
    # The rule about the record's own state (shipped), not the one about another state (processing).
    assert "Once an order has shipped it can no longer be cancelled" in answer.text
    assert "free of charge" not in answer.text
    assert {c.source_id for c in answer.citations} == {"tool:order_lookup:cd34", "cancel"}


def test_a_low_graded_article_does_not_join_a_record_that_answers_a_plain_question() -> None:
    answer = synthesize_answer("Where is order BC-1042 and what is its tracking number?", LOOKUP,
                               [SHIPPED, CANCELLING])
    assert {c.source_id for c in answer.citations} == {"tool:order_lookup:cd34"}


# A rule question whose words the record already says: the words cannot tell the rule from the record.
RENTAL = evidence("tool:rental_lookup:ef56", "Rental RX-88, fetched 08:00",
                  "Rental RX-88 is awaiting deposit: a compact car from Porto, pick-up 2027-03-02T10:00. "
                  "Rental RX-88 has 2 extra drivers; deposit paid: no.")
DEPOSITS = evidence("deposits#0", "Paying the deposit",
                    "A rental awaiting deposit is held for 72 hours. A rental awaiting deposit cannot be "
                    "picked up early.", grade=Grade.CORRECT, score=0.6)
PICKUP = evidence("pickup#0", "Picking up a car",
                  "Pick-up desks open 2 hours before the booked time. Bring the card the rental was paid "
                  "with.", grade=Grade.AMBIGUOUS, score=0.45)


def test_a_rule_question_on_the_records_own_words_takes_the_best_graded_rule_with_a_number() -> None:
    answer = synthesize_answer("Rental RX-88 says awaiting deposit. How long do I have to pay the deposit?",
                               LOOKUP, [RENTAL, DEPOSITS, PICKUP])
    # The rule holds the asked value (a duration), so it leads; the record follows.
    assert answer.text.startswith("A rental awaiting deposit is held for 72 hours")
    assert "Rental RX-88 is awaiting deposit" in answer.text and "picked up early" not in answer.text
    assert {c.source_id for c in answer.citations} == {"tool:rental_lookup:ef56", "deposits"}


def test_an_ambiguous_rule_with_the_asked_words_joins_when_can_i_questions() -> None:
    answer = synthesize_answer("When can I pick up rental RX-88?", LOOKUP, [RENTAL, PICKUP])
    assert "2027-03-02T10:00" in answer.text and "open 2 hours before the booked time" in answer.text


def test_a_question_about_the_record_alone_takes_no_rule_on_its_words() -> None:
    # "how many … do I have" is the auxiliary of a record question, not what the asker may do.
    for question in ("How many extra drivers do I have on rental RX-88?", "When does rental RX-88 start?"):
        answer = synthesize_answer(question, LOOKUP, [RENTAL, DEPOSITS, PICKUP])
        assert {c.source_id for c in answer.citations} == {"tool:rental_lookup:ef56"}, question


MEMBERSHIP = evidence("tool:membership:aa11", "Membership of m-7, fetched 08:00",
                      "The membership is on the Plus plan and is active; it renews on 2027-01-05 at 45 EUR.")
UPGRADES = evidence(
    "plans#0",
    "Changing plans",
    "Upgrading from Basic to Plus costs 20 EUR more per month, charged from your next payment. "
    "The Basic plan costs 25 EUR per month.",
    grade=Grade.CORRECT,
    score=0.6,
)


def test_the_askers_own_value_comes_from_their_record_before_an_articles_general_one() -> None:
    for evidence_order in ([MEMBERSHIP, UPGRADES], [UPGRADES, MEMBERSHIP]):
        answer = synthesize_answer("How much will my next renewal cost?", LOOKUP, evidence_order)
        assert answer.text.startswith(
            "The membership is on the Plus plan and is active; it renews on 2027-01-05 at 45 EUR"
        )
    # Not the asker's own case: the article's value may lead.
    answer = synthesize_answer(
        "How much does upgrading from Basic to Plus cost?", LOOKUP, [MEMBERSHIP, UPGRADES]
    )
    assert answer.text.startswith("Upgrading from Basic to Plus costs 20 EUR")


def test_an_off_topic_record_never_leads_the_askers_value() -> None:
    off = MEMBERSHIP.model_copy(update={"grade": Grade.INCORRECT, "score": 0.3})
    answer = synthesize_answer("How much will my next renewal cost?", LOOKUP, [off, UPGRADES])
    assert answer.text.startswith("Upgrading from Basic to Plus")
