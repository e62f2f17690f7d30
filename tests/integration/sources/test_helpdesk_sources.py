"""Zendesk Guide and Freshdesk Solutions synced from strict local fakes: pagination and cursors, visibility
from segments and folders, drafts / deletions / restrictions leaving every engine in one sync, 429 honoured,
401/403 named with what to fix, and a failed listing never taken for deletions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app import source_sync
from app.channels import add_channel
from app.sources import add_source, get_source
from storage import repositories as repo
from tests.support.help_centers import HelpCenter
from tests.support.stack import Stack


@pytest.fixture()
def fake() -> Iterator[HelpCenter]:
    center = HelpCenter()
    yield center
    center.close()


def _tenant(stack: Stack):  # type: ignore[no-untyped-def]
    with stack.services.session() as session:
        return repo.get_tenant(session, tenant_id=stack.tenant_id)


def _zendesk(stack: Stack, fake: HelpCenter, token: str = "zd-token", **extra: str) -> str:
    tenant = _tenant(stack)
    add_channel(
        stack.services,
        tenant=tenant,
        data={
            "name": "zd",
            "type": "zendesk",
            "subdomain": "acme",
            "email": "bot@acme.test",
            "token": token,
            "base_url": fake.url,
        },
    )
    add_source(
        stack.services,
        tenant=tenant,
        data={"name": "guide", "type": "zendesk-guide", "channel": "zd", **extra},
    )
    return get_source(stack.services, tenant=tenant, name="guide").id


def _hits(stack: Stack, query: str, k: int = 30) -> dict[str, dict[str, str]]:
    """source id -> (engine -> visibility) of what each engine returns for `query`."""
    out: dict[str, dict[str, str]] = {}
    for name, backend in stack.services.backends.items():
        for p in backend.search(stack.tenant_id, query, k):
            out.setdefault(p.source_id, {})[name] = f"{p.visibility.value} {p.url}"
    return out


def test_zendesk_guide_sync_follows_changes_deletions_and_segments(stack: Stack, fake: HelpCenter) -> None:
    for i in range(1, 251):
        fake.zd_put(i, title=f"Article {i}", body=f"<p>Setting number {i} is called <b>knob-{i}</b>.</p>")
    fake.zd_put(
        300, title="Agents only", body="<p>Internal escalation path kestrel.</p>", user_segment_id=501
    )
    fake.zd_put(301, title="Draft", body="<p>Unreleased feature heron.</p>", draft=True)
    source_id = _zendesk(stack, fake)

    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error is None, ended.last_error
    assert ended.items == 251 and ended.last_stats["added"] == 251
    assert ended.cursor == {"start_time": fake.zd[301]["_ts"]}
    knob = _hits(stack, "knob-17 setting")
    assert knob[f"{source_id}:17@v1"] == {e: "public https://acme.zendesk.com/hc/en-us/articles/17"
                                          for e in stack.services.backends}
    assert set(_hits(stack, "escalation path kestrel")[f"{source_id}:300@v1"].values()) == {
        "internal https://acme.zendesk.com/hc/en-us/articles/300"}
    assert not any("301" in s for s in _hits(stack, "unreleased feature heron"))

    # Edited, unpublished, deleted, moved to a signed-in segment; a 429 on the way.
    fake.zd_put(5, body="<p>Setting number 5 is now called <b>dial-5</b>.</p>")
    fake.zd_put(6, draft=True)
    fake.zd_delete(7)
    fake.zd_put(8, user_segment_id=502)
    fake.cues.append((429, {"retry-after": "0"}))
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error is None, ended.last_error
    assert ended.last_stats == {"added": 0, "updated": 2, "deleted": 2, "unchanged": 0, "skipped": 0}
    assert ended.items == 249
    assert f"{source_id}:5@v2" in _hits(stack, "dial-5 setting") and f"{source_id}:5@v1" not in _hits(
        stack, "knob-5"
    )
    for gone in (6, 7):
        assert not any(
            s.startswith(f"{source_id}:{gone}@") for s in _hits(stack, f"knob-{gone} setting number {gone}")
        )
    assert set(_hits(stack, "knob-8 setting")[f"{source_id}:8@v2"].values()) == {
        "internal https://acme.zendesk.com/hc/en-us/articles/8"}

    # Nothing changed: the export is empty, the listing removes nothing, nothing is embedded again.
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_stats == {"added": 0, "updated": 0, "deleted": 0, "unchanged": 0, "skipped": 0}

    # --full reads every article again: all unchanged, none rewritten.
    ended = source_sync.run_inline(stack.services, source_id, full=True)
    assert ended.last_stats == {"added": 0, "updated": 0, "deleted": 0, "unchanged": 249, "skipped": 0}


def test_a_failed_listing_deletes_nothing_and_the_next_run_goes_on(stack: Stack, fake: HelpCenter) -> None:
    for i in range(1, 131):
        fake.zd_put(i, title=f"Article {i}", body=f"<p>Body {i} osprey.</p>")
    source_id = _zendesk(stack, fake)
    assert source_sync.run_inline(stack.services, source_id).items == 130
    fake.zd_delete(3)
    fake.fail_once["page%5Bafter%5D"] = 503  # the listing's second page fails: nothing may be deleted
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error and "503" in ended.last_error
    assert ended.items == 130 and ended.last_stats["deleted"] == 0
    assert ended.cursor is not None and ended.cursor["phase"] == "list"  # the next run goes on from there
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error is None and ended.items == 129 and ended.last_stats["deleted"] == 1


@pytest.mark.parametrize(("forbidden", "words"), [(False, "(401)"), (True, "(403)")])
def test_rejected_credentials_name_the_source_and_the_fix(stack: Stack, fake: HelpCenter, forbidden: bool,
                                                          words: str) -> None:
    fake.zd_put(1, title="One", body="<p>One.</p>")
    fake.forbidden = forbidden
    source_id = _zendesk(stack, fake, token="zd-token" if forbidden else "wrong-token")
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error is not None
    assert "source 'guide'" in ended.last_error and words in ended.last_error
    assert "agent or admin" in ended.last_error and ended.items == 0 and ended.failures == 1


def test_freshdesk_solutions_folders_drafts_and_visibility(stack: Stack, fake: HelpCenter) -> None:
    fake.fd_folder(1, 10, visibility=1)
    fake.fd_folder(1, 11, visibility=3)  # agents only
    for i in range(1, 131):
        fake.fd_put(10, i, title=f"Solution {i}", html=f"<p>Fix number {i} uses wrench-{i}.</p>")
    fake.fd_put(11, 900, title="Agent runbook", html="<p>Restart the pelican cluster.</p>")
    fake.fd_put(10, 901, title="Draft", html="<p>Unfinished albatross.</p>", status=1)
    tenant = _tenant(stack)
    add_channel(stack.services, tenant=tenant, data={"name": "fd", "type": "freshdesk", "domain": "acme",
                                                     "api_key": "fd-key", "base_url": fake.url})
    add_source(
        stack.services, tenant=tenant, data={"name": "kb", "type": "freshdesk-solutions", "channel": "fd"}
    )
    source_id = get_source(stack.services, tenant=tenant, name="kb").id

    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_error is None, ended.last_error
    assert ended.items == 131 and ended.last_stats["added"] == 131
    assert set(_hits(stack, "wrench-120 fix")[f"{source_id}:120@v1"].values()) == {
        f"public {fake.url}/support/solutions/articles/120"}
    assert {
        v.split()[0] for v in _hits(stack, "restart pelican cluster")[f"{source_id}:900@v1"].values()
    } == {"internal"}
    assert not any(":901@" in s for s in _hits(stack, "unfinished albatross"))

    fake.fd_put(10, 12, title="Solution 12", html="<p>Fix 12.</p>", status=1)  # unpublished
    fake.fd_delete(10, 13)
    fake.fd_folder(1, 10, visibility=2)  # the folder becomes logged-in users only
    ended = source_sync.run_inline(stack.services, source_id)
    assert ended.last_stats["deleted"] == 2 and ended.last_stats["updated"] == 128
    assert not any(
        s.startswith((f"{source_id}:12@", f"{source_id}:13@")) for s in _hits(stack, "wrench-12 wrench-13")
    )
    assert {v.split()[0] for v in _hits(stack, "wrench-120 fix")[f"{source_id}:120@v2"].values()} == {
        "internal"
    }


def test_429_waits_the_retry_after_it_is_given(fake: HelpCenter) -> None:
    from adapters.delivery.outbound import OutboundGuard
    from adapters.sources.http import SourceClient

    slept: list[float] = []
    client = SourceClient(
        source="guide",
        product="Zendesk",
        base_url=fake.url,
        auth=("bot@acme.test/token", "zd-token"),
        guard=OutboundGuard.for_hosts(["127.0.0.1"]),
        timeout=5,
        fix="fix it",
        sleep=slept.append,
    )
    fake.cues.extend([(429, {"retry-after": "7"}), (429, {"retry-after": "3"})])
    data = client.get("/api/v2/help_center/user_segments", what="segments")
    assert slept == [7.0, 3.0] and len(data["user_segments"]) == 2
    client.close()


def test_a_worker_syncs_the_help_center_and_an_unpublished_article_leaves(
    stack: Stack, fake: HelpCenter
) -> None:
    from cli.commands import celery_for
    from storage import _sources as sources_repo
    from tests.support.wait import wait_until
    from workers import names

    for i in range(1, 121):
        fake.zd_put(i, title=f"Article {i}", body=f"<p>Setting number {i} is called <b>knob-{i}</b>.</p>")
    source_id = _zendesk(stack, fake)
    stack.start_worker(concurrency=1, queues=names.Q_SOURCES)
    stack.wait_ready()
    app = celery_for(stack.settings)

    def synced(count: int) -> bool:
        with stack.services.session() as session:
            row = sources_repo.get_source(session, source_id=source_id)
        return row.run_id is None and row.items == count and row.last_error is None

    app.send_task(names.T_SOURCE_SYNC, args=[source_id, False])
    assert wait_until(lambda: synced(120), timeout=120)
    assert f"{source_id}:42@v1" in _hits(stack, "knob-42 setting")
    fake.zd_put(42, draft=True)
    fake.cues.append((429, {"retry-after": "0"}))
    app.send_task(names.T_SOURCE_SYNC, args=[source_id, False])
    assert wait_until(lambda: synced(119), timeout=120)
    assert not any(s.startswith(f"{source_id}:42@") for s in _hits(stack, "knob-42 setting number 42"))
