"""Bearer API keys: none or unknown → 401; another tenant's resources → 404 (existence not revealed)."""

from __future__ import annotations

import pytest

from tests.integration.api.conftest import Api


@pytest.mark.parametrize("path", ["/v1/investigations/x", "/v1/investigations/x/trace",
                                  "/v1/investigations/x/events", "/v1/investigations/x/deliveries",
                                  "/v1/deliveries/x"])
def test_missing_key_is_401(api: Api, path: str) -> None:
    response = api.client.get(path)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_bad_key_is_401_and_writes_nothing(api: Api) -> None:
    response = api.post({"question": "hello?"}, key="sk_not-a-real-key")
    assert response.status_code == 401
    assert api.launcher.calls == []
    malformed = api.client.post(
        "/v1/investigations", json={"question": "q"}, headers={"Authorization": "Basic x"}
    )
    assert malformed.status_code == 401


def test_other_tenants_investigation_is_404_everywhere(api: Api) -> None:
    inv_id = api.post({"question": "What is ERR_4021?",
                       "callback": {"type": "webhook", "url": "https://hooks.example.com/h"}}).json()["id"]
    other = api.auth(api.other_key)
    for path in (f"/v1/investigations/{inv_id}", f"/v1/investigations/{inv_id}/trace",
                 f"/v1/investigations/{inv_id}/events", f"/v1/investigations/{inv_id}/deliveries",
                 f"/trace/{inv_id}"):
        assert api.client.get(path, headers=other).status_code == 404, path
    delivery_id = api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth()).json()["deliveries"][0][
        "id"
    ]
    assert api.client.get(f"/v1/deliveries/{delivery_id}", headers=other).status_code == 404
    assert api.client.post(f"/v1/deliveries/{delivery_id}/redeliver", headers=other).status_code == 404
    assert api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth()).status_code == 200


def test_unknown_id_is_404(api: Api) -> None:
    response = api.client.get("/v1/investigations/does-not-exist", headers=api.auth())
    assert response.status_code == 404 and "not found" in response.json()["detail"]


def test_pages_without_a_session_go_to_the_sign_in_form(api: Api) -> None:
    for path in ("/trace/x", "/investigations"):
        response = api.client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")


def test_a_key_in_the_page_url_is_neither_accepted_nor_echoed(api: Api) -> None:
    inv_id = api.post({"question": "q?"}).json()["id"]
    response = api.client.get(f"/trace/{inv_id}?key={api.key}", follow_redirects=False)
    assert response.status_code == 303 and api.key not in response.headers["location"]
    # The JSON API wants the header.
    assert api.client.get(f"/v1/investigations/{inv_id}?key={api.key}").status_code == 401
