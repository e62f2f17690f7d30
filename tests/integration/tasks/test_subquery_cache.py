"""The sub-query cache against a real Redis and database, through the inline executor: an entry is served
only under the corpus version it was built under (the database's), and `subquery_cache_ttl` 0 is no cache
at all (no entry read, none written)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from adapters.search.ingest import SourceDocument
from app.corpus import corpus_changed, ingest_documents, remove_documents
from app.intake import parse_request, submit_investigation
from bootstrap import Services
from storage import repositories as repo
from tasks import inline
from tests.support.stack import Stack, build_stack

QUESTION = "How long is the Quillon refund window?"
DOC = SourceDocument(id="quillon-refunds", title="Quillon refunds",
                     text="Quillon orders can be refunded within 45 days of delivery, to the card that paid.")


def _cached_flags(services: Services, tenant_name: str) -> list[bool]:
    """Ask as a customer; whether each retrieval of the run was served from the cache."""
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=tenant_name)
    request = parse_request({"question": QUESTION, "audience": "customer"})
    inv_id = submit_investigation(services, tenant=tenant, request=request, launch=lambda _i: None).id
    inline.run(services, inv_id, deliver=False)
    with services.session() as session:
        events = repo.list_events(session, investigation_id=inv_id)
    flags = [bool(e.data.get("cached")) for e in events if e.kind == "retrieval"]
    assert flags, "the question was answered without retrieval"
    return flags


def _entries(client: redis.Redis, stack: Stack) -> list[bytes]:
    return list(client.scan_iter(match=f"{stack.settings.redis_prefix}:cache:*"))


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> Stack:
    stack = build_stack(
        tmp_path / "home", redis_url, redis_prefix, database_url=db_url, subquery_cache_ttl=600
    )
    ingest_documents(stack.services, [DOC], tenant_id=stack.tenant_id)
    return stack


def test_an_entry_is_served_only_under_the_corpus_version_it_was_built_under(
        stack: Stack, redis_client: redis.Redis) -> None:
    assert not any(_cached_flags(stack.services, stack.tenant_name))
    assert _entries(redis_client, stack)
    assert all(_cached_flags(stack.services, stack.tenant_name))  # same corpus: served from the cache
    with stack.services.session() as session:
        before = repo.corpus_version(session, tenant_id=stack.tenant_id)
    assert corpus_changed(stack.services, tenant_id=stack.tenant_id) == before + 1  # as any ingest does
    assert not any(_cached_flags(stack.services, stack.tenant_name))  # the same Redis: never served again
    assert all(_cached_flags(stack.services, stack.tenant_name))  # rebuilt under the new version


def test_a_ttl_of_zero_reads_and_writes_no_entry(stack: Stack, redis_client: redis.Redis) -> None:
    # entries of the current version, written with the cache on
    _cached_flags(stack.services, stack.tenant_name)
    written = _entries(redis_client, stack)
    assert written
    off = Services(stack.settings.model_copy(update={"subquery_cache_ttl": 0}))
    assert not any(_cached_flags(off, stack.tenant_name))  # present and current, yet not read
    redis_client.delete(*written)
    assert not any(_cached_flags(off, stack.tenant_name))
    assert _entries(redis_client, stack) == []  # and nothing written


def test_removing_a_document_retires_what_was_cached_with_it(stack: Stack) -> None:
    _cached_flags(stack.services, stack.tenant_name)
    with stack.services.session() as session:
        before = repo.corpus_version(session, tenant_id=stack.tenant_id)
    assert remove_documents(stack.services, [DOC.id], tenant_id=stack.tenant_id) >= 1
    with stack.services.session() as session:
        assert repo.corpus_version(session, tenant_id=stack.tenant_id) == before + 1
    assert not any(_cached_flags(stack.services, stack.tenant_name))
