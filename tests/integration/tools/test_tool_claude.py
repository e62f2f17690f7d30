"""With Claude: the declared tools are offered as tool-use definitions filtered by the policy (context
parameters hidden), and every tool_use the model returns is validated against schema and policy before
any call — a model talked into another account's arguments calls nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.tool_services import ToolServices
from tests.fakes.messages_api import FakeMessagesAPI, Tool
from tests.fakes.messages_brain import HeuristicBrain
from tests.integration.tools.conftest import DANA, ToolStack, build, tool_events
from tests.unit.investigation.fakes import BagOfWordsEmbedder


@pytest.fixture(scope="module")
def claude() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(HeuristicBrain(BagOfWordsEmbedder())) as server:
        yield server


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, api: ToolServices,
          claude: FakeMessagesAPI) -> Iterator[ToolStack]:
    api.reset()
    built = build(
        tmp_path / "home",
        redis_url,
        redis_prefix,
        api,
        llm="anthropic",
        anthropic_base_url=claude.url,
        ANTHROPIC_API_KEY="sk-test",
        llm_max_retries=0,
        llm_timeout=10.0,
    )
    yield built
    built.services.engine.dispose()


def test_policy_filtered_definitions_are_offered_without_context_parameters(
        stack: ToolStack, claude: FakeMessagesAPI) -> None:
    claude.script_step("billing_account", Tool({}, name="billing_account"))
    view = stack.run("Why is my workspace read-only?", DANA)
    offered = [r for r in claude.calls("billing_account")][-1].tools
    assert [t["name"] for t in offered] == ["billing_account", "past_tickets", "service_status"]
    billing = offered[0]
    assert billing["input_schema"]["properties"] == {} and "account_id" not in str(billing["input_schema"])
    assert [c["tool"] for c in tool_events(view)] == ["billing_account"]
    assert tool_events(view)[0]["args"] == {"account_id": "acct-42"}
    assert any(str(c["source_id"]).startswith("tool:billing_account") for c in view["citations"])


def test_arguments_for_another_account_are_refused_and_nothing_is_called(
        stack: ToolStack, claude: FakeMessagesAPI, api: ToolServices) -> None:
    claude.script_step("billing_account", Tool({"account_id": "acct-999"}, name="billing_account"),
                       )
    view = stack.run("Why is my workspace read-only?", DANA)
    refused = tool_events(view, "tool_refused")
    assert refused and "acct-999" in refused[0]["reason"] and "model asked" in refused[0]["reason"]
    assert tool_events(view) == [] and api.calls() == []


def test_unknown_tools_and_undeclared_arguments_are_refused(stack: ToolStack, claude: FakeMessagesAPI,
                                                            api: ToolServices) -> None:
    claude.script_step("billing_account", Tool({"account_id": "acct-42"}, name="delete_account"))
    view = stack.run("Why is my workspace read-only?", DANA)
    assert "no such tool" in tool_events(view, "tool_refused")[0]["reason"]
    claude.script_step("billing_account", Tool({"ticket": "T-9999"}, name="past_tickets"))
    view = stack.run("Did you already answer my previous ticket?", DANA)
    assert "does not appear in the question" in tool_events(view, "tool_refused")[0]["reason"]
    assert api.calls() == []
