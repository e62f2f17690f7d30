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
REFUNDS = evidence("delays#0", "Delayed orders and refunds",
                   "When an order is delayed past its estimated delivery date, you can ask for a refund of the "
                   "shipping cost under Orders, Help with this order.")


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
CANCELLING = evidence("cancel#0", "Cancelling an order",
                      "An order can be cancelled free of charge while it is processing. Once an order has shipped "
                      "it can no longer be cancelled; return it after delivery instead.", grade=Grade.INCORRECT,
                      score=0.39)


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
