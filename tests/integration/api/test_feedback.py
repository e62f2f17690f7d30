"""Rating an answer: a link's GET records nothing; one press records it (CSRF token + same origin); forged,
expired and other-tenant tokens are refused with 403 and record nothing; the page shows the answer only to a
signed-in visitor; the API key route answers 201, 422 naming fields, 404 for another tenant's id."""

from __future__ import annotations

import re
import time

from app.feedback import links_for
from storage import repositories as repo
from storage.rating_links import RATING_TTL_SECONDS, rating_token
from storage.signing_key import secret_key
from tests.integration.api.conftest import Api
from tests.integration.api.test_console import csrf_of, login

ANSWER = "SSO is included in the Enterprise plan [1]."


def _answered(api: Api, tenant_id: str | None = None) -> str:
    with api.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id or api.tenant_id)
        inv, _ = repo.create_investigation(
            session,
            tenant=tenant,
            question="Which plan has SSO?",
            mode="agentic",
            callback=None,
            budget={},
            idempotency_key=None,
            deadline_seconds=60,
        )
        repo.update_investigation(session, investigation_id=inv.id, route="lookup")
        repo.finish_investigation(
            session, investigation_id=inv.id, status="answered", stop_reason="sufficient", answer=ANSWER
        )
        return inv.id


def _path(api: Api, inv_id: str, rater: str = "email:ann@acme.test", now: float | None = None,
          tenant_id: str | None = None) -> str:
    token = rating_token(secret_key(api.services.settings), tenant_id=tenant_id or api.tenant_id,
                         investigation_id=inv_id, rater=rater, now=now)
    return f"/r/{token}"


def _ratings(api: Api, inv_id: str, current_only: bool = True) -> list[tuple[str, str]]:
    with api.services.session() as session:
        return [(f.rater, f.rating) for f in repo.list_feedback(session, investigation_id=inv_id,
                                                                current_only=current_only)]


def test_opening_a_link_records_nothing_and_one_press_records_it(api: Api) -> None:
    inv = _answered(api)
    path = _path(api, inv)
    page = api.client.get(path + "?rating=wrong")
    assert page.status_code == 200
    assert 'value="wrong" required checked' in page.text and "<script" not in page.text
    assert ANSWER not in page.text and "Which plan has SSO" not in page.text  # a link alone reads nothing
    assert _ratings(api, inv) == []  # a mail scanner opening the link records nothing
    done = api.client.post(
        path,
        data={
            "rating": "wrong",
            "comment": "<b>Pro</b> has it",
            "correct_answer": "Pro",
            "csrf": csrf_of(page.text),
        },
    )
    assert done.status_code == 200 and "recorded as <strong>Wrong" in done.text
    again = api.client.post(path, data={"rating": "partly", "csrf": csrf_of(page.text)})
    assert again.status_code == 200
    assert _ratings(api, inv) == [("email:ann@acme.test", "partly")]  # one current rating per rater
    assert [r for _, r in _ratings(api, inv, current_only=False)] == ["wrong", "partly"]  # history kept
    with api.services.session() as session:
        first = repo.list_feedback(session, investigation_id=inv, current_only=False)[0]
    assert (first.comment, first.correct_answer, first.source) == ("<b>Pro</b> has it", "Pro", "link")


def test_forged_expired_and_other_tenant_tokens_are_refused(api: Api) -> None:
    inv = _answered(api)
    good = _path(api, inv)
    csrf = csrf_of(api.client.get(good).text)
    forged = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    expired = _path(api, inv, now=time.time() - RATING_TTL_SECONDS - 5)
    other_tenant = _path(api, inv, tenant_id="f" * 32)  # signed, but the investigation is not that tenant's
    missing = _path(api, "0" * 32)
    for path in (forged, expired, other_tenant, missing, "/r/garbage"):
        assert api.client.get(path + "?rating=helpful").status_code == 403, path
        assert api.client.post(path, data={"rating": "helpful", "csrf": csrf}).status_code == 403, path
    assert _ratings(api, inv, current_only=False) == []


def test_a_press_without_the_pages_token_or_from_another_site_is_refused(api: Api) -> None:
    inv = _answered(api)
    path = _path(api, inv)
    csrf = csrf_of(api.client.get(path).text)
    assert api.client.post(path, data={"rating": "helpful"}).status_code == 403
    assert api.client.post(path, data={"rating": "helpful", "csrf": "x" * 32}).status_code == 403
    cross = api.client.post(
        path, data={"rating": "helpful", "csrf": csrf}, headers={"sec-fetch-site": "cross-site"}
    )
    assert cross.status_code == 403
    other = api.client.post(path, data={"rating": "helpful", "csrf": csrf},
                            headers={"origin": "https://evil.example"})
    assert other.status_code == 403
    # The token of another investigation's page does not work here either.
    other_csrf = csrf_of(api.client.get(_path(api, _answered(api))).text)
    assert api.client.post(path, data={"rating": "helpful", "csrf": other_csrf}).status_code == 403
    assert _ratings(api, inv) == []


def test_bad_form_input_names_the_field(api: Api) -> None:
    inv = _answered(api)
    path = _path(api, inv)
    csrf = csrf_of(api.client.get(path).text)
    too_long = api.client.post(path, data={"rating": "wrong", "comment": "x" * 2001, "csrf": csrf})
    assert too_long.status_code == 422 and "comment: at most 2000 characters" in too_long.text
    no_rating = api.client.post(path, data={"csrf": csrf})
    assert no_rating.status_code == 422 and "rating: must be one of" in no_rating.text
    assert _ratings(api, inv) == []


def test_a_signed_in_visitor_of_the_tenant_sees_the_answer(api: Api) -> None:
    inv = _answered(api)
    path = _path(api, inv)
    login(api, key=api.other_key)
    assert ANSWER not in api.client.get(path).text  # signed in, but to another tenant
    login(api)
    page = api.client.get(path)
    assert ANSWER in page.text and "Which plan has SSO?" in page.text
    evil = _answered(api)
    with api.services.session() as session:
        repo.update_investigation(session, investigation_id=evil, answer="<script>alert(1)</script>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in api.client.get(_path(api, evil)).text


def test_rating_with_the_api_key(api: Api) -> None:
    inv = _answered(api)
    url = f"/v1/investigations/{inv}/feedback"
    made = api.client.post(
        url, json={"rating": "helpful", "rater": "bot", "comment": "ok"}, headers=api.auth()
    )
    assert made.status_code == 201, made.text
    assert made.json()["rating"] == "helpful" and made.json()["source"] == "api"
    bad = api.client.post(
        url, json={"rating": "great", "comment": "x" * 2001, "extra": 1}, headers=api.auth()
    )
    assert bad.status_code == 422
    fields = {tuple(d["loc"]) for d in bad.json()["detail"]}
    assert {("body", "rating"), ("body", "comment"), ("body", "extra")} <= fields
    assert api.client.post(url, json={"rating": "wrong"}, headers=api.auth(api.other_key)).status_code == 404
    assert api.client.post(url, json={"rating": "wrong"}).status_code == 401
    assert _ratings(api, inv) == [("bot", "helpful")]


def test_links_for_a_page_point_at_this_server_without_a_public_url(api: Api) -> None:
    links = links_for(api.services, tenant_id=api.tenant_id, investigation_id="abc", rater="console")
    assert re.fullmatch(r"/r/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\?rating=wrong", links["wrong"])


def test_the_trace_and_list_pages_show_ratings_and_filter_by_them(api: Api) -> None:
    rated, other = _answered(api), _answered(api)
    api.client.post(f"/v1/investigations/{rated}/feedback", headers=api.auth(),
                    json={"rating": "wrong", "rater": "lead", "correct_answer": "<i>Enterprise</i> only"})
    login(api)
    trace = api.client.get(f"/trace/{rated}")
    assert trace.status_code == 200
    assert "<strong>Wrong</strong> by lead via api" in trace.text
    assert "&lt;i&gt;Enterprise&lt;/i&gt; only" in trace.text
    links = re.findall(r'href="(/r/[^"]+\?rating=(?:helpful|partly|wrong))"', trace.text)
    assert len(links) == 3
    assert api.client.get(links[0].replace("&amp;", "&")).status_code == 200  # the trace's own links work
    listed = api.client.get("/investigations?rating=wrong")
    assert f"/trace/{rated}" in listed.text and f"/trace/{other}" not in listed.text
    assert "rated wrong (1)" in listed.text and 'badge rated-wrong">wrong<' in listed.text
    everything = api.client.get("/investigations")
    assert f"/trace/{rated}" in everything.text and f"/trace/{other}" in everything.text


def test_the_quality_page_and_its_csv(api: Api) -> None:
    rated = _answered(api)
    api.client.post(f"/v1/investigations/{rated}/feedback", headers=api.auth(), json={"rating": "wrong"})
    assert api.client.get("/quality", follow_redirects=False).status_code == 303  # not signed in
    login(api)
    page = api.client.get("/quality?days=30")
    assert page.status_code == 200
    assert "<svg" in page.text and "<script" not in page.text and "cdn" not in page.text.lower()
    assert "1 rated: helpful 0%, partly 0%, wrong 100%" in page.text
    assert "<th scope=row>lookup</th><td>1</td>" in page.text
    csv_reply = api.client.get("/quality.csv?days=30")
    assert csv_reply.headers["content-type"].startswith("text/csv")
    lines = csv_reply.text.splitlines()
    assert lines[0].startswith("dimension,value,investigations,answered")
    assert "route,lookup,1,1,0,0,0,0,1,0,0,0,0,0" in lines
    assert api.client.get("/quality?days=0").status_code == 422
