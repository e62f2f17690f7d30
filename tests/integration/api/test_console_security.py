"""The operator console against a hostile reader: sign-in links work once and only for what they were made
for, every form refuses cross-site posts and missing CSRF tokens (login included), signing out and key
rotation end sessions server-side, and bad credentials are attempt-limited (429 + Retry-After)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from api import session
from storage import repositories as repo
from storage.console_sessions import ConsoleSessions
from storage.rate_limit import FailureCounter
from tests.integration.api.conftest import Api
from tests.integration.api.test_console import csrf_of, login

EVIL = {"origin": "http://evil.example", "sec-fetch-site": "cross-site"}


def _link(api: Api, investigation_id: str, *, console: bool = False) -> str:
    with api.services.session() as db:
        tenant = repo.get_tenant(db, tenant_id=api.tenant_id)
    return "/link/" + session.link_token(
        api.services.settings, tenant.id, tenant.api_key_hash, investigation_id, console=console
    )


def _dead_delivery(api: Api) -> tuple[str, str]:
    inv_id = api.post({"question": "What is ERR_4021?",
                       "callback": {"type": "webhook", "url": "https://hooks.example.com/h"}}).json()["id"]
    with api.services.session() as db:
        repo.finish_investigation(
            db, investigation_id=inv_id, status="failed", stop_reason="error", error="x"
        )
        delivery_id = repo.list_deliveries(db, investigation_id=inv_id)[0].id
        repo.mark_delivery(db, delivery_id=delivery_id, status="dead", error="HTTP 500")
    return inv_id, delivery_id


def test_a_link_works_once(api: Api) -> None:
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    link = _link(api, inv_id)
    first = api.client.get(link, follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == f"/trace/{inv_id}"
    assert "Max-Age=3600" in first.headers["set-cookie"]  # a short session after a link, not 8 h
    api.client.cookies.clear()
    again = api.client.get(link, follow_redirects=False)
    assert again.status_code == 401 and "already used" in again.text
    assert session.COOKIE not in again.headers.get("set-cookie", "")


def test_two_opens_at_once_cannot_both_win(api: Api) -> None:
    sessions = ConsoleSessions(api.services.redis, api.services.settings.redis_prefix)
    start = threading.Barrier(8)
    won: list[bool] = []

    def open_it() -> None:
        start.wait()
        won.append(sessions.consume_link("nonce-raced", 60))

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == [False] * 7 + [True]


def test_a_link_session_sees_its_own_trace_only_read_only(api: Api) -> None:
    inv_id, delivery_id = _dead_delivery(api)
    other = api.post({"question": "Hello there"}).json()["id"]
    assert api.client.get(_link(api, inv_id), follow_redirects=False).status_code == 303
    page = api.client.get(f"/trace/{inv_id}")
    assert (
        page.status_code == 200
        and "/redeliver" not in page.text
        and 'href="/investigations"' not in page.text
    )
    for path in (f"/trace/{other}", "/investigations"):
        refused = api.client.get(path, follow_redirects=False)
        assert refused.status_code == 303 and refused.headers["location"].startswith("/login"), path
    assert api.client.get(f"/v1/investigations/{other}/events").status_code == 401
    token = csrf_of(page.text)  # the sign-out form's: the session's own token does not open actions
    act = api.client.post(f"/console/deliveries/{delivery_id}/redeliver", data={"csrf": token},
                          follow_redirects=False)
    assert act.status_code == 403 and api.redeliverer.calls == []


def test_a_console_link_opens_the_whole_console(api: Api) -> None:
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    other = api.post({"question": "Hello there"}).json()["id"]
    assert api.client.get(_link(api, inv_id, console=True), follow_redirects=False).status_code == 303
    assert api.client.get("/investigations").status_code == 200
    assert api.client.get(f"/trace/{other}").status_code == 200


def test_cross_site_or_tokenless_login_is_refused(api: Api) -> None:
    for headers in (EVIL, {"sec-fetch-site": "cross-site"}, {"origin": "http://evil.example"}):
        response = login(api, headers=headers)
        assert response.status_code == 403, headers
        assert session.COOKIE not in response.headers.get("set-cookie", "")
    # The curl: a post with the key and no form token.
    bare = api.client.post("/login", data={"key": api.key}, follow_redirects=False)
    assert bare.status_code == 403 and session.COOKIE not in bare.headers.get("set-cookie", "")
    # A token from another browser's form does not fit this browser's pre-session cookie.
    form = api.client.get("/login")
    api.client.cookies.clear()
    api.client.cookies.set(session.LOGIN_COOKIE, "x" * 32, path="/login")
    stolen = api.client.post(
        "/login", data={"key": api.key, "csrf": csrf_of(form.text)}, follow_redirects=False
    )
    assert stolen.status_code == 403
    assert login(api).status_code == 303


def test_cross_site_logout_is_refused_and_logout_ends_the_session(api: Api) -> None:
    assert login(api).status_code == 303
    page = api.client.get("/investigations")
    token, old = csrf_of(page.text), api.client.cookies.get(session.COOKIE)
    assert (
        api.client.post("/logout", data={"csrf": token}, headers=EVIL, follow_redirects=False).status_code
        == 403
    )
    assert api.client.post("/logout", follow_redirects=False).status_code == 403  # no token
    assert api.client.get("/investigations").status_code == 200  # still signed in
    assert api.client.post("/logout", data={"csrf": token}, follow_redirects=False).status_code == 303
    api.client.cookies.set(session.COOKIE, str(old))  # a copy of the old cookie, kept by an attacker
    stale = api.client.get("/investigations", follow_redirects=False)
    assert stale.status_code == 303 and stale.headers["location"].startswith("/login")


def test_rotating_the_key_ends_its_sessions_and_links(api: Api) -> None:
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    link = _link(api, inv_id)
    assert login(api).status_code == 303 and api.client.get("/investigations").status_code == 200
    with api.services.session() as db:
        _, new_key = repo.rotate_api_key(db, tenant_id=api.tenant_id)
    assert api.client.get("/investigations", follow_redirects=False).status_code == 303
    api.client.cookies.clear()
    assert api.client.get(link, follow_redirects=False).status_code == 401
    assert api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth()).status_code == 401
    assert api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth(new_key)).status_code == 200


def test_end_tenant_deletes_every_session_of_the_tenant(api: Api) -> None:
    sessions = ConsoleSessions(api.services.redis, api.services.settings.redis_prefix)
    ids = [sessions.create(tenant_id="t-rotated", key_tag="abc", scope="console", ttl_seconds=60)[0]
           for _ in range(3)]
    kept, _ = sessions.create(tenant_id="t-other", key_tag="abc", scope="console", ttl_seconds=60)
    sessions.create(tenant_id="t-rotated", key_tag="abc", scope="console", ttl_seconds=5)
    tenant_set = f"{api.services.settings.redis_prefix}:console:tenant:t-rotated"
    assert api.services.redis.ttl(tenant_set) > 5  # a shorter session never shortens the tenant's set
    assert sessions.end_tenant("t-rotated") == 4
    assert all(sessions.get(i) is None for i in ids) and sessions.get(kept) is not None


@dataclass
class Clock:
    now: float = 600_000.0  # a window boundary (windows are multiples of 600 s)

    def __call__(self) -> float:
        return self.now


def _limiter(api: Api, clock: Clock) -> FailureCounter:
    settings = api.services.settings
    counter = FailureCounter(
        api.services.redis, settings.redis_prefix, limit=40, window_seconds=600, clock=clock
    )
    api.client.app.state.auth_failures = counter  # type: ignore[attr-defined]  # Starlette's state is dynamic
    return counter


def test_the_41st_bad_key_is_429_with_retry_after(api: Api) -> None:
    clock = Clock(600_200.0)  # 200 s into a 600 s window
    _limiter(api, clock)
    for attempt in range(40):
        assert api.client.get("/v1/tenant", headers=api.auth("sk_guess")).status_code == 401, attempt
    limited = api.client.get("/v1/tenant", headers=api.auth("sk_guess"))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "400"
    # From that address even the right key waits: guessing cannot go on at full speed.
    assert api.client.get("/v1/tenant", headers=api.auth()).status_code == 429
    clock.now += 400
    assert api.client.get("/v1/tenant", headers=api.auth()).status_code == 200


def test_failed_sign_ins_are_limited_and_links_count_against_their_tenant(api: Api) -> None:
    clock = Clock()
    counter = _limiter(api, clock)
    for attempt in range(40):
        assert login(api, key="sk_wrong").status_code == 401, attempt
    limited = login(api)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "600"
    clock.now += 600
    inv_id = api.post({"question": "Which plan has SCIM?"}).json()["id"]
    link = _link(api, inv_id)
    assert api.client.get(link, follow_redirects=False).status_code == 303
    api.client.cookies.clear()
    assert api.client.get(link, follow_redirects=False).status_code == 401  # replayed
    assert counter.count(f"tenant:{api.tenant_id}") == 1 and counter.count("addr:testclient") == 1
