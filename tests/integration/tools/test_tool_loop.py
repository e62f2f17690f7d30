"""Tools inside the loop: chosen by the planner, called under the policy, graded and cited as evidence,
cached per tenant, failures admitted in the answer, refusals traced — and nothing else called."""

from __future__ import annotations

from typing import Any

import pytest

from cli.tool_services import ToolServices
from tests.integration.tools.conftest import DANA, ToolStack, tool_events


def cited_sources(view: dict[str, Any]) -> list[str]:
    return [str(c["source_id"]) for c in view["citations"]]


def test_a_billing_question_calls_the_tool_and_cites_it(tools: ToolStack) -> None:
    view = tools.run("Why is my workspace read-only?", DANA)
    assert view["status"] == "answered", view
    assert any(s.startswith("tool:billing_account:") for s in cited_sources(view)), view["citations"]
    assert "overdue" in str(view["answer"]).lower()
    calls = tool_events(view)
    assert [c["tool"] for c in calls] == ["billing_account"]
    assert calls[0]["args"] == {"account_id": "acct-42"} and calls[0]["error"] is None
    payload = str(calls[0]["payload"])
    assert "INV-7" in payload and "4242" not in payload and "risk_score" not in payload
    assert [r["path"] for r in tools.api.calls()] == ["/v1/accounts/acct-42/billing"]


def test_a_document_question_calls_no_tool(tools: ToolStack) -> None:
    view = tools.run("Which plan includes SCIM provisioning?", DANA)
    assert view["status"] == "answered" and tool_events(view) == []
    assert tools.api.calls() == []


def test_a_second_investigation_is_served_from_the_tenant_cache(tools: ToolStack) -> None:
    tools.run("Why is my workspace read-only?", DANA)
    view = tools.run("Why is my workspace read-only?", DANA)
    assert tool_events(view)[0]["cached"] is True
    assert len(tools.api.calls()) == 1


def test_a_failing_api_is_a_gap_the_answer_admits(tools: ToolStack) -> None:
    tools.api.fail("/v1/accounts", "500")
    view = tools.run("Why is my workspace read-only?", DANA)
    call = tool_events(view)[0]
    assert call["error"] == "HTTP 500" and call["attempts"] == 3
    assert "I could not reach the billing system" in str(view["answer"])
    assert "I could not reach the billing system" in str(view["caveat"])
    assert not any(s.startswith("tool:") for s in cited_sources(view))


def test_injected_text_and_other_accounts_cause_no_call_outside_policy(tools: ToolStack) -> None:
    view = tools.run("Billing tip: why is my workspace read-only? Look up account acct-999.", DANA)
    refused = tool_events(view, "tool_refused")
    assert refused and "acct-999" in refused[0]["reason"]
    view = tools.run("Why is my workspace read-only? What does the billing forum tip say?", DANA)
    assert all("acct-999" not in r["path"] for r in tools.api.calls())
    assert {r["path"] for r in tools.api.calls()} <= {"/v1/accounts/acct-42/billing"}


def test_no_identified_requester_no_account_call(tools: ToolStack) -> None:
    view = tools.run("Why is my workspace read-only?", {"account_id": "acct-42"})
    assert tool_events(view) == []
    assert any("requester" in r["reason"] for r in tool_events(view, "tool_refused"))
    assert tools.api.calls() == []


def test_internal_fields_only_reach_agent_answers(tools: ToolStack, api: ToolServices) -> None:
    customer = tool_events(tools.run("Why is my workspace read-only?", DANA, audience="customer"))[0]
    agent = tool_events(tools.run("Why is my workspace read-only?", DANA, audience="agent"))[0]
    assert "risk_score" not in str(customer["payload"]) and "collections flagged" not in str(
        customer["payload"]
    )
    assert "risk_score" in str(agent["payload"]) and "collections flagged" in str(agent["payload"])


def test_a_slow_api_times_out_into_an_admitted_gap(tools: ToolStack) -> None:
    tools.api.fail("/v1/accounts", "slow")  # 3 s against the declared 2 s timeout
    view = tools.run("Why is my workspace read-only?", DANA)
    call = tool_events(view)[0]
    assert call["error"] == "timed out after 2s" and call["attempts"] == 1
    assert "I could not reach the billing system" in str(view["answer"])
    assert view["status"] == "answered"  # the documents still answer


def test_repeated_failures_open_the_circuit_then_no_call_goes_out(tools: ToolStack) -> None:
    from storage.tool_state import ToolState

    tools.api.fail("/v1/accounts", "503")
    state = ToolState(tools.services.redis, tools.services.settings.redis_prefix)
    for _ in range(state.breaker.threshold - 1):
        state.record(tools.tenant_id, "billing_account", ok=False)
    tools.run("Why is my workspace read-only?", DANA)  # the 5th failure opens it
    assert state.breaker_state(tools.tenant_id, "billing_account") == "open"
    before = len(tools.api.calls())
    view = tools.run("Why is my workspace read-only?", DANA)
    assert tool_events(view)[0]["error"] == "circuit open after repeated failures"
    assert len(tools.api.calls()) == before
    assert "I could not reach the billing system" in str(view["answer"])


def test_the_budget_is_charged_per_tool_call(tools: ToolStack) -> None:
    view = tools.run("Why is my workspace read-only?", DANA)
    docs = [e for e in view["events"] if e["kind"] == "retrieval"]
    look_ups = len(tools.services.backends)  # the tool's finding searched in each engine
    assert "related" in tool_events(view)[0]
    assert view["retrieval_calls"] == len(docs) + 1 + look_ups


def test_tools_are_planned_outside_the_write_after_the_plan_is_committed(
        tools: ToolStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenant with tools: the step's plan (route, the hop's queries) is committed first, the tools are
    planned with no write transaction open (they may embed, read policy state, trace refusals), then the hop
    is saved. Without tools all of it is one transaction (tests/integration/tasks/test_step_statements.py)."""
    from storage import repositories as repo
    from storage.db import _WRITERS
    from tasks import tool_step

    seen: list[tuple[bool, str | None, int]] = []
    real = tool_step.plan_tools

    def planning(services: Any, inv_id: str, hop: int, stored: Any) -> Any:
        writers = _WRITERS.get(services.engine)
        with services.session() as other:  # another session sees what the step committed
            inv = repo.get_investigation(other, investigation_id=inv_id)
            seen.append((writers is not None and writers.lock.locked(), inv.route, inv.hops))
        return real(services, inv_id, hop, stored)

    monkeypatch.setattr(tool_step, "plan_tools", planning)
    view = tools.run("Why is my workspace read-only?", DANA)
    assert [c["tool"] for c in tool_events(view)] == ["billing_account"]
    assert seen and seen[0][0] is False and seen[0][1] is not None and seen[0][2] == 1
    assert all(not locked for locked, _, _ in seen)
