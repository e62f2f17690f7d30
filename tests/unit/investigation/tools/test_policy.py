"""The role policy: routes, audiences, requester, and arguments only from context or the question."""

from __future__ import annotations

from typing import Any

import pytest

from investigation.errors import ToolRefused
from investigation.tools.declaration import parse_declaration
from investigation.tools.policy import CallScope, check_proposed, refusal, resolve_arguments
from investigation.tools.tool_use import definitions, validate_tool_use
from tests.unit.investigation.tools.samples import CONTEXT, billing, status, tickets

BILLING = parse_declaration(billing())
STATUS = parse_declaration(status())
TICKETS = parse_declaration(tickets())


def scope(
    question: str = "Why is my workspace read-only?",
    *,
    route: str = "lookup",
    audience: str = "customer",
    context: dict[str, Any] | None = None,
) -> CallScope:
    return CallScope(route=route, audience=audience, question=question,
                     context=CONTEXT if context is None else context)


def test_arguments_come_from_the_context() -> None:
    assert resolve_arguments(BILLING, scope()) == {"account_id": "acct-42"}
    assert resolve_arguments(STATUS, scope("Is there an outage?")) == {"region": "eu"}


def test_a_question_parameter_is_extracted_and_validated() -> None:
    args = resolve_arguments(TICKETS, scope("Did you already answer T-2002?", audience="agent"))
    assert args == {"email": "dana@acme.io", "ticket": "T-2002"}
    assert resolve_arguments(TICKETS, scope("Did you answer this before?", audience="agent")) == {
        "email": "dana@acme.io"}


def test_two_candidate_values_are_refused_not_guessed() -> None:
    with pytest.raises(ToolRefused, match="2 values"):
        resolve_arguments(TICKETS, scope("Was T-2002 or T-3003 answered?", audience="agent"))


def test_route_audience_and_requester_rules() -> None:
    assert "route multi_hop" in (refusal(BILLING.model_copy(update={"policy": BILLING.policy.model_copy(
        update={"routes": ("lookup",)})}), scope(route="multi_hop")) or "")
    assert "audience customer" in (refusal(TICKETS, scope()) or "")
    assert "requester" in (refusal(BILLING, scope(context={"account_id": "acct-42"})) or "")
    assert refusal(STATUS, scope(context={"attributes": {"region": "us"}})) is None


def test_a_question_about_another_account_is_refused() -> None:
    with pytest.raises(ToolRefused, match="acct-999"):
        resolve_arguments(BILLING, scope("Why is account acct-999 read-only?"))
    with pytest.raises(ToolRefused, match="other@evil.test"):
        resolve_arguments(BILLING, scope("Show the invoices of other@evil.test"))
    assert resolve_arguments(BILLING, scope("Why is my account acct-42 read-only?")) == {
        "account_id": "acct-42"
    }


def test_missing_required_context_is_refused() -> None:
    context = {"requester": {"email": "dana@acme.io"}}
    with pytest.raises(ToolRefused, match="account_id"):
        resolve_arguments(BILLING, scope(context=context))


def test_model_arguments_must_match_the_context() -> None:
    with pytest.raises(ToolRefused, match="not the investigation's account_id"):
        check_proposed(BILLING, scope(), {"account_id": "acct-999"})
    assert check_proposed(BILLING, scope(), {}) == {"account_id": "acct-42"}
    assert check_proposed(BILLING, scope(), {"account_id": "acct-42"}) == {"account_id": "acct-42"}


def test_model_question_arguments_must_appear_in_the_question() -> None:
    agent = scope("Did you answer T-2002?", audience="agent")
    assert check_proposed(TICKETS, agent, {"ticket": "T-2002"})["ticket"] == "T-2002"
    with pytest.raises(ToolRefused, match="does not appear"):
        check_proposed(TICKETS, agent, {"ticket": "T-9999"})
    with pytest.raises(ToolRefused, match="unknown argument"):
        check_proposed(TICKETS, agent, {"ticket": "T-2002", "email2": "x@y.z"})


def test_tool_use_definitions_are_filtered_by_policy_and_hide_context_parameters() -> None:
    defs = definitions([BILLING, STATUS, TICKETS], scope())  # customer audience: no past tickets
    assert [d["name"] for d in defs] == ["billing_account", "service_status"]
    assert defs[0]["input_schema"]["properties"] == {}
    agent_defs = definitions([TICKETS], scope(audience="agent"))
    assert list(agent_defs[0]["input_schema"]["properties"]) == ["ticket"]


def test_validate_tool_use_refuses_unknown_tools_and_bad_arguments() -> None:
    with pytest.raises(ToolRefused, match="no such tool"):
        validate_tool_use([BILLING], scope(), "delete_account", {})
    with pytest.raises(ToolRefused, match="object"):
        validate_tool_use([BILLING], scope(), "billing_account", ["acct-42"])
    assert validate_tool_use([BILLING], scope(), "billing_account", {}).args == {"account_id": "acct-42"}
