"""The planner's tool choice: cheap first, relevant tools only, each tool once."""

from __future__ import annotations

from investigation.tools.declaration import parse_declaration
from investigation.tools.openapi import import_operation
from investigation.tools.selection import choose, relevance
from tests.unit.investigation.tools.samples import billing, status, tickets

TOOLS = [parse_declaration(billing()), parse_declaration(status()), parse_declaration(tickets())]


def names(question: str, hop: int = 1, cached: set[str] | None = None) -> list[str]:
    return [c.name for c in choose(question, hop, TOOLS, called=set(), cached=cached)]


def test_relevant_tools_are_chosen_in_hop_one() -> None:
    assert names("Why is my workspace read-only?") == ["billing_account"]
    assert names("Is there an outage right now? The service seems down.") == ["service_status"]
    assert names("Did you already answer my previous ticket about this problem?") == ["past_tickets"]


def test_document_questions_call_no_tool() -> None:
    assert names("Which plan includes SCIM provisioning?") == []
    assert names("How do I rotate an API key?") == []


def test_weaker_matches_wait_for_a_later_hop_or_a_cached_answer() -> None:
    question = "What does my plan include for SSO?"
    assert names(question) == []
    assert names(question, hop=2) == ["billing_account"]
    assert names(question, cached={"billing_account"}) == ["billing_account"]


def test_a_tool_is_called_once() -> None:
    chosen = choose("Why is my workspace read-only?", 2, TOOLS, called={"billing_account"})
    assert chosen == []


def test_embedding_similarity_can_raise_relevance() -> None:
    decl = TOOLS[0]
    assert relevance("Am I behind on payments?", decl, similarity=0.8) > relevance(
        "Am I behind on payments?", decl
    )


def test_openapi_operation_import() -> None:
    spec = {"servers": [{"url": "https://api.acme.test"}],
            "paths": {"/v1/accounts/{account_id}/billing": {"get": {
                "operationId": "getBilling", "summary": "Billing account",
                "description": "Billing state of an account: invoices and overdue balance.",
                "parameters": [{"name": "account_id", "in": "path", "required": True,
                                "schema": {"$ref": "#/components/schemas/AccountId"}}],
                "responses": {"200": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"plan": {}, "invoices": {}}}}}}}}}},
            "components": {"schemas": {"AccountId": {"type": "string", "pattern": "^acct-[0-9]+$"}}}}
    raw = import_operation(spec, "getBilling")
    decl = parse_declaration(raw)
    assert decl.url == "https://api.acme.test/v1/accounts/{account_id}/billing"
    assert decl.params["account_id"].source == "context.account_id"
    assert decl.params["account_id"].json_schema["pattern"] == "^acct-[0-9]+$"
    assert decl.projection == ("invoices", "plan")


def test_the_askers_own_record_of_a_kind_the_tool_returns_chooses_it() -> None:
    # "my earlier ticket": the past tickets tool returns tickets[]; few other words match its declaration.
    chosen = choose(
        "What happened with my earlier ticket about the audit log export?", 1, TOOLS, called=set()
    )
    assert [c.name for c in chosen] == ["past_tickets"]
    assert "the asker's own record of a kind the tool returns (my earlier ticket" in chosen[0].reason
    # Another person's ticket, or no possessive: no floor.
    assert names("What happened with the earlier ticket about the audit log export?") == []


def test_the_asked_kind_of_value_tells_tools_apart_but_never_chooses_one_alone() -> None:
    from investigation.tools.selection import asked_kinds, held_kinds

    billing_tool = TOOLS[0]
    assert asked_kinds("How much do we owe, and when is it due?") == ["date", "amount"]
    assert held_kinds("How much do we owe?", billing_tool) == ["amount"]
    # "how much" is half a word of the question, matched by the billing tool's invoices[].amount.
    assert relevance("How much do we owe on the overdue invoice?", billing_tool) == 0.8643
    # A date asked for matches the status page's started_at, but no word of the question is declared there.
    assert relevance("When does my subscription renew?", TOOLS[1]) == 0.0
