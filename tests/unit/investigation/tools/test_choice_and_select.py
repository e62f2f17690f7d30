"""Tool choice that generalises (field names, `examples:`, an id a declared pattern recognises, each
traced with why) and `select:` (an id named in the question picks one item of the requester's list)."""

from __future__ import annotations

from typing import Any

import pytest

from investigation.errors import ValidationFailed
from investigation.tools.declaration import parse_declaration
from investigation.tools.narrowing import missing_sentence, narrow
from investigation.tools.selection import choose, relevance
from tests.unit.investigation.tools.samples import BASE


def orders(**overrides: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "customer_orders", "description": "The requester's recent purchases and where they are.",
        "url": BASE + "/v2/customers/{account_id}/orders",
        "params": {"account_id": {"schema": {"type": "string"}, "source": "context.account_id"}},
        "projection": ["orders[].id", "orders[].status", "orders[].tracking_number", "orders[].eta"],
        "owner": {"field": "orders[].customer_id", "equals": "context.account_id"},
        "select": {"field": "orders[].id", "from_question": "^BC-[0-9]{4,6}$"},
        "policy": {"audiences": ["agent", "customer"]},
    }
    decl.update(overrides)
    return decl


def test_field_names_examples_and_named_ids_choose_the_tool_with_a_reason() -> None:
    decl = parse_declaration(orders())
    assert relevance("What is the tracking number?", decl) >= 0.5  # a field name, not the description
    assert relevance("Which plan includes SSO?", decl) < 0.3
    with_examples = parse_declaration(orders(examples=["Has my parcel left the warehouse yet?"]))
    assert relevance("Has the parcel left the warehouse?", with_examples) > relevance(
        "Has the parcel left the warehouse?", decl)
    chosen = choose("Is BC-204117 delayed?", 1, [decl], called=set())
    assert [c.name for c in chosen] == ["customer_orders"] and "orders[].id" in chosen[0].reason
    chosen = choose("What is the tracking number?", 1, [decl], called=set())
    assert chosen and "tracking" in chosen[0].reason


def test_select_picks_the_named_item_and_says_when_it_is_not_the_requesters() -> None:
    decl = parse_declaration(orders())
    document = {"orders": [{"id": "BC-1042", "status": "shipped"}, {"id": "BC-204117", "status": "delayed"}]}
    picked = narrow(decl, document, "Has my order BC-204117 shipped yet?")
    assert picked.document == {"orders": [{"id": "BC-204117", "status": "delayed"}]} and not picked.missing
    assert narrow(decl, document, "Where are my orders?").document == document
    absent = narrow(decl, document, "What is the total of order BC-307755?")
    assert absent.document == {"orders": []} and absent.missing == ("BC-307755",)
    assert missing_sentence(decl, absent.missing) == "I can't look up order BC-307755 for your account."


def test_select_and_examples_are_validated_naming_the_field() -> None:
    for bad, field in (
        (orders(select={"field": "orders.id", "from_question": "x"}), "select.field"),
        (orders(select={"field": "orders[].number", "from_question": "x"}), "select.field"),
        (orders(select={"field": "orders[].id", "from_question": "("}), "select.from_question"),
        (orders(examples=["ok"]), "examples[0]"),
    ):
        with pytest.raises(ValidationFailed) as caught:
            parse_declaration(bad)
        assert caught.value.field == field


def _gym(name: str, description: str, summary: list[str], **overrides: Any) -> Any:
    return parse_declaration({
        "name": name, "description": description, "url": BASE + f"/v1/members/{{account_id}}/{name}",
        "params": {"account_id": {"schema": {"type": "string"}, "source": "context.account_id"}},
        "projection": [f"{name}.value"], "summary": summary,
        "owner": {"field": f"{name}.member_id", "equals": "context.account_id"},
        "policy": {"audiences": ["agent", "customer"]}, **overrides})


def test_the_tool_whose_record_sentences_read_closest_leads_only_when_clearly_ahead() -> None:
    from investigation.tools.selection import reads_like, summary_texts

    pass_ = _gym("pass_state", "The member's gym pass.", ["Sauna included: {pass_state.value}."])
    assert summary_texts(pass_) == ["Sauna included: ."]
    assert reads_like({"pass_state": 0.53, "class_bookings": 0.33}) == "pass_state"
    assert reads_like({"pass_state": 0.53, "class_bookings": 0.48}) is None  # a near tie chooses nothing
    assert reads_like({"pass_state": 0.40, "class_bookings": 0.1}) is None  # too far from the question
    assert reads_like({}) is None
    question = "May I go to the sauna with my membership?"
    assert relevance(question, pass_) < 0.5 <= relevance(question, pass_, leads_by_summary=True)
    chosen = choose(question, 1, [pass_], called=set(), leader="pass_state")
    assert [c.name for c in chosen] == ["pass_state"] and "read closest" in chosen[0].reason
    assert choose(question, 1, [pass_], called=set()) == []


def test_a_question_about_the_askers_past_dealings_chooses_the_tool_that_keeps_them() -> None:
    from investigation.tools.selection import asks_history

    history = _gym(
        "visits", "The member's previous visits and the coach's earlier notes.", ["Visit {visits.value}."]
    )
    plan = _gym("plan", "The member's plan and price.", ["Plan {plan.value}."])
    for question in ("Have I asked a coach about knee pain before?", "What did the coach tell me last time?",
                     "Did you already reply to me about the locker?"):
        assert asks_history(question, history) and not asks_history(question, plan), question
        chosen = choose(question, 1, [history, plan], called=set())
        assert [c.name for c in chosen] == ["visits"] and "past dealings" in chosen[0].reason, question
    # Not a history question: "before" naming a moment, no first person, a tool about anyone.
    assert not asks_history("Can I freeze my plan before it renews?", history)
    assert not asks_history("Was the gym closed before?", history)
    anyone = _gym("visits", "Previous visits of all members.", ["Visit {visits.value}."],
                  owner={"public": True}, policy={"audiences": ["agent", "customer"], "subject": "any"})
    assert not asks_history("Have I been here before?", anyone)
