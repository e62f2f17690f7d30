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
    for bad, field in ((orders(select={"field": "orders.id", "from_question": "x"}), "select.field"),
                       (orders(select={"field": "orders[].number", "from_question": "x"}), "select.field"),
                       (orders(select={"field": "orders[].id", "from_question": "("}), "select.from_question"),
                       (orders(examples=["ok"]), "examples[0]")):
        with pytest.raises(ValidationFailed) as caught:
            parse_declaration(bad)
        assert caught.value.field == field
