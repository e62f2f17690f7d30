"""`/gaps`: signed in like the other operator pages, the topics biggest first with their counts, trend, terms
and links to the investigations; questions shown escaped; another tenant's questions absent; linked from
`/quality`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from tests.integration.api.conftest import Api, new_tenant
from tests.integration.api.test_console import login
from tests.integration.app.test_gaps import CSV, add, seed_gaps
from tests.support.stack import Stack


def _as_stack(api: Api, tenant_id: str | None = None) -> Stack:
    return cast(Stack, SimpleNamespace(services=api.services, tenant_id=tenant_id or api.tenant_id))


def test_the_gaps_page(api: Api) -> None:
    ids = seed_gaps(_as_stack(api))
    hostile = add(_as_stack(api), "<script>alert(1)</script> Where is the audit log?", days_ago=1)
    other_tenant, _ = new_tenant(api.services)
    add(_as_stack(api, other_tenant), "Secret question of another tenant?", days_ago=1)
    assert api.client.get("/gaps", follow_redirects=False).status_code == 303  # not signed in
    login(api)
    page = api.client.get("/gaps?days=30")
    assert page.status_code == 200
    text = page.text
    assert "8 questions refused, rated wrong or partly in the last 30 days (4 in the 30 days before)" in text
    first = text.index('<section class="card gap">')
    assert any(f">{q}</a></h2>" in text[first:first + 300] for q in CSV)  # the biggest topic first
    assert "<strong>4</strong> questions" in text and "up from 1 in the 30 days before" in text
    assert "refused 3, rated wrong 1" in text and "csv" in text
    for inv_id in ids["csv"]:
        assert f'href="/trace/{inv_id}"' in text
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert f"/trace/{hostile}" in text and "Asked once" in text
    assert "Secret question" not in text
    assert api.client.get("/gaps?days=0").status_code == 422
    assert 'href="/gaps?days=30"' in api.client.get("/quality?days=30").text
