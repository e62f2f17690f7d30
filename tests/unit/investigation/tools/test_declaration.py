"""Tool declarations are validated eagerly, each mistake a ValidationFailed naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from investigation.errors import ValidationFailed
from investigation.tools.declaration import declaration_json, parse_declaration
from tests.unit.investigation.tools.samples import billing, status, tickets


def _fails(raw: dict[str, Any]) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        parse_declaration(raw)
    return caught.value


def test_the_sample_declarations_are_valid_and_round_trip() -> None:
    for raw in (billing(), status(), tickets()):
        decl = parse_declaration(raw)
        assert parse_declaration(declaration_json(decl)) == decl


def test_an_invalid_json_schema_names_the_parameter() -> None:
    raw = billing()
    raw["params"]["account_id"]["schema"] = {"type": "strung"}
    err = _fails(raw)
    assert err.field == "params.account_id.schema" and "invalid JSON Schema" in err.message


def test_object_parameters_are_refused() -> None:
    raw = billing()
    raw["params"]["account_id"]["schema"] = {"type": "object"}
    assert _fails(raw).field == "params.account_id.schema"


def test_an_unknown_url_variable_is_named() -> None:
    err = _fails(billing(url="https://api.acme.test/v1/accounts/{acount_id}"))
    assert err.field == "url" and "{acount_id}" in err.message and "account_id" in err.message


def test_a_variable_in_the_host_is_refused() -> None:
    err = _fails(billing(url="https://{account_id}.acme.test/billing"))
    assert err.field == "url" and "host" in err.message


def test_relative_and_non_http_urls_are_refused() -> None:
    assert _fails(billing(url="/v1/accounts/{account_id}")).field == "url"
    assert _fails(billing(url="file:///etc/{account_id}")).field == "url"


def test_credentials_in_the_url_are_refused() -> None:
    assert "credentials" in _fails(billing(url="https://u:p@api.acme.test/{account_id}")).message


def test_parameters_never_come_from_retrieved_text() -> None:
    raw = billing()
    raw["params"]["account_id"]["source"] = "evidence"
    err = _fails(raw)
    assert err.field == "params.account_id.source" and "retrieved text" in err.message


def test_an_unknown_context_field_is_refused() -> None:
    raw = billing()
    raw["params"]["account_id"]["source"] = "context.account"
    assert "unknown context field" in _fails(raw).message


def test_a_question_parameter_needs_a_pattern_or_enum() -> None:
    raw = tickets()
    raw["params"]["ticket"]["schema"] = {"type": "string"}
    assert _fails(raw).field == "params.ticket.source"


def test_a_bad_pattern_is_refused() -> None:
    raw = tickets()
    raw["params"]["ticket"]["schema"] = {"type": "string", "pattern": "T-(["}
    assert _fails(raw).field == "params.ticket.schema"


def test_projection_paths_and_title_variables_are_checked() -> None:
    assert _fails(billing(projection=["account..id"])).field == "projection[0]"
    err = _fails(billing(title="Billing {account.card_number}"))
    assert err.field == "title" and "{account.card_number}" in err.message
    assert _fails(billing(projection=[])).field == "projection"


def test_policy_routes_and_identifiers_are_checked() -> None:
    raw = billing()
    raw["policy"]["routes"] = ["direct"]
    assert _fails(raw).field == "policy.routes[0]"
    raw = billing()
    raw["policy"]["identifiers"] = ["nope"]
    assert _fails(raw).field == "policy.identifiers[0]"


def test_unknown_keys_limits_and_header_auth() -> None:
    assert _fails(billing(colour="blue")).field == "colour"
    assert _fails(billing(timeout=0)).field == "timeout"
    assert _fails(billing(auth={"type": "header"})).field == "auth.header"
    assert _fails(billing(name="Billing Account")).field == "name"


def test_internal_fields_only_for_agents() -> None:
    decl = parse_declaration(billing())
    assert "account.risk_score" in decl.fields_for("agent")
    assert "account.risk_score" not in decl.fields_for("customer")
