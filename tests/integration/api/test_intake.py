"""POST /v1/investigations: 202 at once, idempotency, validation naming the field, size limit, budgets."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.integration.api.conftest import Api, count_investigations

QUESTION = {"question": "Which plan includes SCIM provisioning?"}


def test_accepts_at_once_with_location_and_one_enqueue(api: Api) -> None:
    body = {
        **QUESTION,
        "mode": "single-shot",
        "callback": {"type": "webhook", "url": "https://hooks.example.com/h"},
        "budget": {"max_hops": 1, "deadline_seconds": 30},
    }
    response = api.post(body)
    assert response.status_code == 202, response.text
    data = response.json()
    assert data["status"] == "queued" and data["question"] == QUESTION["question"]
    assert response.headers["location"] == f"/v1/investigations/{data['id']}"
    assert api.launcher.calls == [data["id"]]
    assert [d["channel"] for d in data["deliveries"]] == ["webhook"]
    with api.services.session() as session:
        from storage import repositories as repo

        inv = repo.get_investigation(session, investigation_id=data["id"])
        assert inv.budget["max_hops"] == 1 and inv.budget["deadline_seconds"] == 30
        assert inv.budget["max_retrieval_calls"] == api.services.settings.limits.max_retrieval_calls
        assert inv.mode == "single-shot"


def test_same_idempotency_key_same_investigation_one_row_one_enqueue(api: Api) -> None:
    first = api.post(QUESTION, **{"Idempotency-Key": "ticket-42"})
    second = api.post(QUESTION, **{"Idempotency-Key": "ticket-42"})
    assert first.status_code == 202 and second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert count_investigations(api.services, api.tenant_id) == 1
    assert api.launcher.calls == [first.json()["id"]]
    other = api.post(QUESTION, **{"Idempotency-Key": "ticket-43"})
    assert other.json()["id"] != first.json()["id"]


def test_idempotency_keys_are_per_tenant(api: Api) -> None:
    mine = api.post(QUESTION, **{"Idempotency-Key": "shared"}).json()["id"]
    theirs = api.post(QUESTION, key=api.other_key, **{"Idempotency-Key": "shared"}).json()["id"]
    assert mine != theirs


def test_concurrent_retries_create_one_investigation(api: Api) -> None:
    def post(_: int) -> Any:
        return api.post(QUESTION, **{"Idempotency-Key": "storm"})

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(post, range(16)))
    assert {r.status_code for r in responses} <= {200, 202}
    assert sum(r.status_code == 202 for r in responses) == 1
    assert len({r.json()["id"] for r in responses}) == 1
    assert count_investigations(api.services, api.tenant_id) == 1
    assert len(api.launcher.calls) == 1


def _loc(response: Any) -> list[list[Any]]:
    return [item["loc"] for item in response.json()["detail"]]


@pytest.mark.parametrize(("body", "field"), [
    ({}, "question"),
    ({"question": ""}, "question"),
    ({"question": "   \n\t"}, "question"),
    ({"question": 42}, "question"),
    ({"question": "q", "mode": "turbo"}, "mode"),
    ({"question": "q", "surprise": True}, "surprise"),
    ({"question": "q", "callback": {"type": "carrier-pigeon", "url": "http://x.test/"}}, "callback"),
    ({"question": "q", "callback": []}, "callback"),
    ({"question": "q", "callback": [{"type": "email", "channel": "mail", "to": ["not-an-address"]}]}, "to"),
    ({"question": "q", "callback": {"type": "zendesk", "channel": "zd", "ticket_id": 0}}, "ticket_id"),
    ({"question": "q", "callback": {"type": "webhook", "url": "not a url"}}, "url"),
    ({"question": "q", "callback": {"type": "webhook", "url": "ftp://x.test/"}}, "url"),
    ({"question": "q", "callback": {"type": "webhook"}}, "url"),
    ({"question": "q", "budget": {"max_hops": 0}}, "max_hops"),
    ({"question": "q", "budget": {"max_retrieval_calls": -1}}, "max_retrieval_calls"),
    ({"question": "q", "budget": {"deadline_seconds": 1}}, "deadline_seconds"),
    ({"question": "q", "budget": {"max_llm_tokens": "lots"}}, "max_llm_tokens"),
    ({"question": "q", "budget": {"hops": 2}}, "hops"),
])
def test_invalid_input_is_422_naming_the_field_and_writes_nothing(api: Api, body: dict[str, Any],
                                                                  field: str) -> None:
    response = api.post(body)
    assert response.status_code == 422, response.text
    assert any(field in loc for loc in _loc(response)), response.json()
    assert all(loc[0] == "body" for loc in _loc(response))
    assert count_investigations(api.services, api.tenant_id) == 0
    assert api.launcher.calls == []


def test_malformed_json_is_422(api: Api) -> None:
    response = api.client.post("/v1/investigations", content=b'{"question": ',
                               headers=api.auth(**{"content-type": "application/json"}))
    assert response.status_code == 422
    assert count_investigations(api.services, api.tenant_id) == 0


def test_body_over_8kb_is_413_and_writes_nothing(api: Api) -> None:
    limit = api.services.settings.limits.max_question_bytes
    response = api.post({"question": "x" * limit})
    assert response.status_code == 413
    assert count_investigations(api.services, api.tenant_id) == 0
    just_fits = api.post({"question": "y" * (limit - len('{"question": ""}') - 10)})
    assert just_fits.status_code == 202, just_fits.text


def test_chunked_body_over_limit_is_413(api: Api) -> None:
    def chunks() -> Any:
        for _ in range(20):
            yield b"x" * 1024

    response = api.client.post("/v1/investigations", content=chunks(),
                               headers=api.auth(**{"content-type": "application/json"}))
    assert response.status_code == 413
    assert count_investigations(api.services, api.tenant_id) == 0


def test_budget_over_tenant_limit_is_422_naming_the_field(api: Api) -> None:
    # The fixture's tenant may use at most 2 hops (server default: 3).
    response = api.post({**QUESTION, "budget": {"max_hops": 3}})
    assert response.status_code == 422
    assert _loc(response) == [["body", "budget", "max_hops"]]
    assert "2" in response.json()["detail"][0]["msg"]
    assert count_investigations(api.services, api.tenant_id) == 0


def test_budget_over_server_default_is_422(api: Api) -> None:
    over = api.services.settings.limits.max_retrieval_calls + 1
    response = api.post({**QUESTION, "budget": {"max_retrieval_calls": over}})
    assert response.status_code == 422
    assert _loc(response) == [["body", "budget", "max_retrieval_calls"]]


def test_tenant_limit_caps_the_default_budget(api: Api) -> None:
    inv_id = api.post(QUESTION).json()["id"]
    with api.services.session() as session:
        from storage import repositories as repo

        assert repo.get_investigation(session, investigation_id=inv_id).budget["max_hops"] == 2


def test_enqueue_failure_marks_failed_and_503(api: Api) -> None:
    api.launcher.fail = True
    response = api.post(QUESTION, **{"Idempotency-Key": "doomed"})
    assert response.status_code == 503
    with api.services.session() as session:
        from sqlmodel import select

        from storage.models import Investigation

        inv = session.exec(select(Investigation).where(Investigation.tenant_id == api.tenant_id)).one()
    assert inv.status == "failed" and inv.error and "enqueue failed" in inv.error
    assert inv.stop_reason == "error"


def test_overlong_idempotency_key_is_422(api: Api) -> None:
    response = api.post(QUESTION, **{"Idempotency-Key": "k" * 201})
    assert response.status_code == 422
    assert any("Idempotency-Key" in loc for loc in _loc(response))


def test_private_callback_hosts_refused_by_default(tmp_path: Any, db_url: str, redis_url: str,
                                                    redis_prefix: str) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app
    from bootstrap import Services
    from tests.integration.api.conftest import Recorder, make_settings, new_tenant

    services = Services(make_settings(tmp_path / "home", db_url, redis_url, redis_prefix))
    try:
        _, key = new_tenant(services)
        launcher = Recorder()
        with TestClient(create_app(services=services, launcher=launcher, redeliverer=Recorder())) as client:
            for url in (
                "http://127.0.0.1:8080/h",
                "http://localhost/h",
                "http://10.1.2.3/h",
                "http://[::1]/h",
                "http://169.254.169.254/latest/meta-data",
                "http://0.0.0.0/h",
                "http://2130706433/h",
                "http://0x7f.1/h",
                "http://[::ffff:127.0.0.1]/h",
                "http://localhost./h",
            ):
                response = client.post("/v1/investigations", headers={"Authorization": f"Bearer {key}"},
                                       json={"question": "q", "callback": {"type": "webhook", "url": url}})
                assert response.status_code == 422, url
                assert response.json()["detail"][0]["loc"] == ["body", "callback", "url"]
            ok = client.post(
                "/v1/investigations",
                headers={"Authorization": f"Bearer {key}"},
                json={"question": "q", "callback": {"type": "webhook", "url": "https://example.com/h"}},
            )
            assert ok.status_code == 202
        assert len(launcher.calls) == 1
    finally:
        services.engine.dispose()


def test_openapi_documents_the_request_body(api: Api) -> None:
    schema = api.client.get("/openapi.json").json()
    body = schema["paths"]["/v1/investigations"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]
    assert body == {"$ref": "#/components/schemas/InvestigationCreate"}
    components = schema["components"]["schemas"]
    assert {"InvestigationCreate", "WebhookCallback", "BudgetOverride"} <= set(components)
    assert api.client.get("/docs").status_code == 200
