"""Operator pages: sign-in form → HttpOnly SameSite cookie for the tenant, signed links, the list page
with filters, redelivery of a dead delivery from the browser, and tokens that cannot be forged."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Protocol

from api import session
from storage import repositories as repo
from tests.integration.api.conftest import Api


class Reply(Protocol):
    """What the test client answers (httpx's or httpx2's Response, by Starlette version)."""

    @property
    def status_code(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def headers(self) -> Mapping[str, str]: ...


def csrf_of(page: str) -> str:
    """The hidden CSRF token of a page's forms."""
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def login(api: Api, key: str | None = None, next_path: str = "/investigations",
          headers: dict[str, str] | None = None) -> Reply:
    """Sign in through the form, as a browser does: its page first (the pre-session token), then the post."""
    form = api.client.get("/login")
    return api.client.post(
        "/login",
        data={"key": key or api.key, "next": next_path, "csrf": csrf_of(form.text)},
        headers=headers or {},
        follow_redirects=False,
    )


def test_sign_in_sets_an_httponly_samesite_cookie_and_opens_pages(api: Api) -> None:
    form = api.client.get("/login?next=/investigations")
    assert (
        form.status_code == 200
        and 'type="password"' in form.text
        and "sk_" not in form.text.split("<code>")[0]
    )
    bad = login(api, key="sk_wrong")
    assert (
        bad.status_code == 401
        and "not valid" in bad.text
        and session.COOKIE not in bad.headers.get("set-cookie", "")
    )
    good = login(api)
    assert good.status_code == 303 and good.headers["location"] == "/investigations"
    cookie = good.headers["set-cookie"]
    assert cookie.startswith(f"{session.COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert api.key not in cookie and "Path=/" in cookie
    page = api.client.get("/investigations")
    assert page.status_code == 200 and "Investigations of" in page.text
    token = csrf_of(page.text)
    assert api.client.post("/logout", data={"csrf": token}, follow_redirects=False).status_code == 303
    assert api.client.get("/investigations", follow_redirects=False).status_code == 303


def test_next_never_leaves_the_site(api: Api) -> None:
    for evil in ("https://evil.test/", "//evil.test/x", "/\\evil.test"):
        assert login(api, next_path=evil).headers["location"] == "/investigations"


def test_the_cookie_is_scoped_to_its_tenant(api: Api) -> None:
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    login(api, key=api.other_key)
    assert api.client.get(f"/trace/{inv_id}").status_code == 404
    login(api)
    assert api.client.get(f"/trace/{inv_id}").status_code == 200


def test_tokens_are_signed_and_expire() -> None:
    key = b"k" * 32
    claims = session.Claims(
        "t1", "abc", "link", float(int(time.time()) + 60), "inv", nonce="n1", scope="trace"
    )
    token = session.sign(key, claims)
    assert session.verify(key, token, kind="link") == claims
    assert session.verify(key, token, kind="session") is None
    assert session.verify(b"other" * 8, token, kind="link") is None
    body, mac = token.split(".")
    assert session.verify(key, body[:-2] + "xx." + mac, kind="link") is None
    assert session.verify(key, token, kind="link", now=lambda: time.time() + 120) is None
    assert session.verify(key, "garbage", kind="link") is None


def test_a_signed_link_signs_in_and_lands_on_the_trace_without_a_secret_in_the_url(api: Api) -> None:
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    with api.services.session() as db:
        tenant = repo.get_tenant(db, tenant_id=api.tenant_id)
    token = session.link_token(api.services.settings, tenant.id, tenant.api_key_hash, inv_id)
    response = api.client.get(f"/link/{token}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/trace/{inv_id}"
    assert "HttpOnly" in response.headers["set-cookie"]
    assert api.client.get(f"/trace/{inv_id}").status_code == 200
    expired = session.link_token(api.services.settings, tenant.id, tenant.api_key_hash, inv_id,
                                 now=time.time() - 10_000)
    api.client.cookies.clear()
    assert api.client.get(f"/link/{expired}", follow_redirects=False).status_code == 401


def test_list_filters_and_redeliver_button(api: Api) -> None:
    first = api.post({"question": "What is ERR_4021?",
                      "callback": {"type": "webhook", "url": "https://hooks.example.com/h"}}).json()["id"]
    api.post({"question": "Hello there"})
    with api.services.session() as db:
        repo.finish_investigation(db, investigation_id=first, status="failed", stop_reason="error", error="x")
        delivery_id = repo.list_deliveries(db, investigation_id=first)[0].id
        repo.mark_delivery(db, delivery_id=delivery_id, status="dead", error="HTTP 500")
    login(api)
    everything = api.client.get("/investigations").text
    assert "What is ERR_4021?" in everything and "Hello there" in everything and delivery_id in everything
    failed = api.client.get("/investigations?status=failed").text
    assert "What is ERR_4021?" in failed and "Hello there" not in failed and 'aria-current="page"' in failed
    token = csrf_of(everything)
    path = f"/console/deliveries/{delivery_id}/redeliver"
    assert api.client.post(path, follow_redirects=False).status_code == 403  # no CSRF token
    assert api.client.post(path, data={"csrf": "forged"}, follow_redirects=False).status_code == 403
    assert api.redeliverer.calls == []
    done = api.client.post(path, data={"csrf": token}, follow_redirects=False)
    assert done.status_code == 303 and api.redeliverer.calls == [delivery_id]
    with api.services.session() as db:
        assert repo.get_delivery(db, delivery_id=delivery_id).status == "pending"
    cross = api.client.post(path, data={"csrf": token}, headers={"origin": "https://evil.test"},
                            follow_redirects=False)
    assert cross.status_code == 403 and api.redeliverer.calls == [delivery_id]
    fetched = api.client.post(path, data={"csrf": token}, headers={"sec-fetch-site": "cross-site"},
                              follow_redirects=False)
    assert fetched.status_code == 403 and api.redeliverer.calls == [delivery_id]
