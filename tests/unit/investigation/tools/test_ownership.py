"""The owner check: a tool whose arguments come from the question must say whose record it returns;
each result (and each list item) is the requester's or is dropped (customers) / marked (agents); the
cache key names who asks; a URL value can never change the path's shape (issue 48 row 11)."""

from __future__ import annotations

from typing import Any

import pytest

from investigation.errors import ToolRefused, ValidationFailed
from investigation.tools.declaration import parse_declaration
from investigation.tools.ownership import check_owner, not_yours_sentence, requester_identity
from investigation.tools.policy import CallScope, resolve_arguments
from investigation.tools.templates import render_url
from tests.unit.investigation.tools.samples import BASE, tickets

ANA = {"requester": {"email": "ana@example.org"}, "account_id": "cust-a"}
CLEO = {"requester": {"email": "cleo@example.org"}, "account_id": "cust-c"}


def order(**overrides: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": "order_lookup",
        "description": "One order by its number: status, carrier, ETA and total.",
        "url": BASE + "/v2/orders/{order_id}",
        "params": {
            "order_id": {"schema": {"type": "string", "pattern": "^BC-[0-9]{4,6}$"}, "source": "question"}
        },
        "projection": ["order.id", "order.status"],
        "owner": {"field": "order.customer_id", "equals": "context.account_id"},
        "policy": {"audiences": ["agent", "customer"]},
    }
    decl.update(overrides)
    return decl


def orders() -> dict[str, Any]:
    return order(
        name="customer_orders",
        url=BASE + "/v2/customers/{account_id}/orders",
        params={"account_id": {"schema": {"type": "string"}, "source": "context.account_id"}},
        projection=["orders[].id"],
        owner={"field": "orders[].customer_id", "equals": "context.account_id"},
    )


def _fails(raw: dict[str, Any]) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        parse_declaration(raw)
    return caught.value


def test_a_question_parameter_needs_an_owner_check_naming_the_field() -> None:
    error = _fails(order(owner=None))
    assert error.field == "owner" and "order_id" in error.message and "owner: {field:" in error.message
    assert _fails(order(owner={"field": "order.customer_id"})).field == "owner.equals"
    assert _fails(order(owner={"field": "order.customer_id", "equals": "account_id"})).field == "owner.equals"
    assert _fails(order(owner={"field": "a[].b[].c", "equals": "context.account_id"})).field == "owner.field"
    assert _fails(order(owner={"public": True})).field == "owner.public"  # public needs subject: any
    public = order(owner={"public": True}, policy={"subject": "any", "requires_requester": False})
    assert parse_declaration(public).owner is not None
    assert parse_declaration(tickets()).owner is not None


def test_a_record_of_another_customer_is_dropped_for_customers_and_marked_for_agents() -> None:
    decl = parse_declaration(order())
    document = {"order": {"id": "BC-9001", "status": "delivered", "customer_id": "cust-b"}}
    refused = check_owner(decl, document, ANA, "customer")
    assert refused.document is None and refused.foreign == 1
    assert refused.reason and "order.customer_id" in refused.reason and "cust-b" not in refused.reason
    marked = check_owner(decl, document, ANA, "agent")
    assert marked.document == document and marked.kept_marked
    mine = {"order": {"id": "BC-1042", "status": "shipped", "customer_id": "CUST-A"}}
    assert check_owner(decl, mine, ANA, "customer").document == mine
    # no account
    assert check_owner(decl, mine, {"requester": {"email": "x@y.io"}}, "customer").document is None
    assert (
        not_yours_sentence(decl, {"order_id": "BC-9001"}) == "I can't look up order BC-9001 for your account."
    )


def test_list_items_of_other_customers_are_dropped_one_by_one() -> None:
    decl = parse_declaration(orders())
    document = {"orders": [{"id": "BC-1", "customer_id": "cust-a"}, {"id": "BC-2", "customer_id": "cust-b"},
                           {"id": "BC-3", "customer_id": None}]}
    verdict = check_owner(decl, document, ANA, "customer")
    assert verdict.document == {"orders": [{"id": "BC-1", "customer_id": "cust-a"}]} and verdict.foreign == 2
    assert check_owner(decl, document, ANA, "agent").document == document
    assert check_owner(decl, {"orders": []}, ANA, "customer").document == {"orders": []}


def test_the_requester_identity_separates_requesters() -> None:
    decl = parse_declaration(order())
    assert requester_identity(decl, ANA) != requester_identity(decl, CLEO)
    assert requester_identity(decl, ANA) == requester_identity(decl, {**ANA, "ticket_id": "T-1"})


def test_a_dot_dot_value_never_changes_the_paths_shape() -> None:
    template = BASE + "/v2/cards/{name}/preview"
    for value in ("..", ".", "", " .. "):
        with pytest.raises(ValidationFailed) as caught:
            render_url(template, {"name": value})
        assert caught.value.field == "params.name"
    assert render_url(template, {"name": "../admin"}) == BASE + "/v2/cards/..%2Fadmin/preview"
    assert render_url(template, {"name": "a.b"}) == BASE + "/v2/cards/a.b/preview"
    assert render_url(BASE + "/v2/search?q={name}", {"name": ".."}) == BASE + "/v2/search?q=.."
    card = parse_declaration(
        {
            "name": "gift_card",
            "description": "The requester's gift card balance.",
            "url": template,
            "projection": ["balance"],
            "params": {"name": {"schema": {"type": "string"}, "source": "context.requester.name"}},
            "policy": {"audiences": ["customer"]},
        }
    )
    scope = CallScope(route="lookup", audience="customer", question="my card?",
                      context={"requester": {"email": "a@b.io", "name": ".."}})
    with pytest.raises(ToolRefused, match="would change the URL's path"):
        resolve_arguments(card, scope)
