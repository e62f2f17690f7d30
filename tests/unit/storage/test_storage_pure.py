"""The pure parts of storage: cache keys, API key and secret formats, name rules, the public views."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from investigation.errors import ValidationFailed
from storage._common import iso, naive_utc
from storage._tenants import hash_api_key, new_api_key, new_webhook_secret, validate_tenant_name
from storage.models import Delivery, EvidenceRecord, Investigation, TraceEvent
from storage.redis_state import RedisState, cache_digest, client_from_url, normalise_query
from storage.views import build_investigation_view, event_view, order_evidence
from tests.conftest import redis_url_pair


def test_queries_are_normalised_for_the_cache() -> None:
    assert normalise_query("  Which\tPLAN  has\nSSO? ") == "which plan has sso?"
    assert normalise_query("Ｗｈｉｃｈ") == "which"  # NFKC folds full-width forms


def test_cache_digest_covers_query_k_and_acl() -> None:
    base = cache_digest("Which plan?", 10, ["staff", "all"])
    assert cache_digest("which  PLAN?", 10, ["all", "staff", "all"]) == base
    assert cache_digest("which plan?", 5, ["all", "staff"]) != base
    assert cache_digest("which plan?", 10, ["all"]) != base
    assert cache_digest("which plan?", 10, None) == cache_digest("which plan?", 10, [])
    # no separator ambiguity between the query and the ACL
    assert cache_digest("a", 1, ["b,c"]) != cache_digest("a", 1, ["b", "c"])
    # The entries other processes and releases wrote stay theirs: sha256 of JSON [query, k, sorted ACL].
    assert base == "b438a19c993992162bf1b8767e2c7590ab70ddca1c128a150d93cbd88519d4bf"
    assert base == hashlib.sha256(b'["which plan?", 10, ["all", "staff"]]').hexdigest()
    assert cache_digest("Zürich", 3, ("x",)) == hashlib.sha256('["zürich", 3, ["x"]]'.encode()).hexdigest()


def test_cache_keys_name_the_tenant_corpus_version_and_engine() -> None:
    state = RedisState.__new__(RedisState)
    state.prefix = "sleuth"
    key = state.cache_key("acme", "lexical", "q", 10, None)
    assert key == f"sleuth:cache:acme:v0:lexical:{cache_digest('q', 10, None)}"
    assert state.cache_key("globex", "lexical", "q", 10, None) != key
    # After an ingest raises the corpus version, the old entry is never looked up.
    assert state.cache_key("acme", "lexical", "q", 10, None, version=1) != key


def test_api_keys_and_webhook_secrets() -> None:
    key = new_api_key()
    assert key.startswith("sk_") and len(key) >= 40 and new_api_key() != key
    assert hash_api_key(key) == hashlib.sha256(key.encode()).hexdigest()
    secret = new_webhook_secret()
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[len("whsec_") :])) == 24


@pytest.mark.parametrize("name", ["acme", "A.b-c_9", "x" * 100])
def test_valid_tenant_names(name: str) -> None:
    assert validate_tenant_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 101, "a b", "a/b", "a:b", "é", "a\n"])
def test_invalid_tenant_names(name: str) -> None:
    with pytest.raises(ValidationFailed) as info:
        validate_tenant_name(name)
    assert info.value.field == "name"


def test_times_are_naive_utc_inside_and_explicit_utc_outside() -> None:
    aware = datetime(2025, 1, 2, 5, 0, tzinfo=timezone(timedelta(hours=2)))
    assert naive_utc(aware) == datetime(2025, 1, 2, 3, 0)
    assert naive_utc(datetime(2025, 1, 2, 3, 0)) == datetime(2025, 1, 2, 3, 0)
    assert iso(datetime(2025, 1, 2, 3, 0)) == "2025-01-02T03:00:00+00:00"
    assert iso(aware) == "2025-01-02T03:00:00+00:00"
    assert iso(None) is None


def _record(eid: str, hop: int, score: float) -> EvidenceRecord:
    return EvidenceRecord(
        investigation_id="i",
        evidence_id=eid,
        chunk_id="c",
        source_id=f"s-{eid}",
        title="t",
        text="x",
        score=score,
        grade="correct",
        hop=hop,
        query="q",
    )


def test_final_evidence_comes_first_in_its_own_order() -> None:
    records = [_record("a", 1, 0.9), _record("b", 1, 0.5), _record("c", 2, 0.7)]
    assert [r.evidence_id for r in order_evidence(records, ["c", "a", "zz", "c"])] == ["c", "a", "b"]
    assert [r.evidence_id for r in order_evidence(records, [])] == ["a", "b", "c"]


def test_the_view_is_json_with_utc_times() -> None:
    inv = Investigation(
        id="i",
        tenant_id="t",
        question="q?",
        status="answered",
        route="lookup",
        answer="A [1]",
        citations=[{"marker": 1, "evidence_id": "a", "source_id": "s-a", "title": "t", "internal": True}],
        final_evidence_ids=["a"],
        created_at=datetime(2025, 1, 1),
        finished_at=datetime(2025, 1, 1, 0, 1),
    )
    deliveries = [
        Delivery(
            id="msg_1", investigation_id="i", tenant_id="t", channel="webhook", slot="webhook", attempts=2
        )
    ]
    view = build_investigation_view(inv, [_record("a", 1, 0.9)], deliveries).model_dump(mode="json")
    assert json.loads(json.dumps(view)) == view
    assert view["citations"] == [
        {"marker": 1, "evidence_id": "a", "source_id": "s-a", "title": "t", "internal": True}
    ]
    assert view["created_at"] == "2025-01-01T00:00:00+00:00"
    assert view["deliveries"] == [{"id": "msg_1", "channel": "webhook", "status": "pending", "attempts": 2}]
    event = TraceEvent(
        id=4, investigation_id="i", step_key="s", kind="route", hop=0, data={"r": 1}, at=datetime(2025, 1, 1)
    )
    assert event_view(event) == {
        "id": 4,
        "kind": "route",
        "hop": 0,
        "at": "2025-01-01T00:00:00+00:00",
        "data": {"r": 1},
    }


def test_socket_urls_convert_between_kombu_and_redis_py() -> None:
    assert redis_url_pair("redis://h:6379/13") == ("redis://h:6379/13", "redis://h:6379/13")
    assert redis_url_pair("unix:///tmp/r.sock") == ("redis+socket:///tmp/r.sock?virtual_host=0",
                                                    "unix:///tmp/r.sock")
    assert redis_url_pair("unix:///tmp/r.sock?db=3") == ("redis+socket:///tmp/r.sock?virtual_host=3",
                                                         "unix:///tmp/r.sock?db=3")
    assert redis_url_pair("redis+socket:///tmp/r.sock?virtual_host=3") == (
        "redis+socket:///tmp/r.sock?virtual_host=3",
        "unix:///tmp/r.sock?db=3",
    )
    client = client_from_url("redis+socket:///tmp/r.sock?virtual_host=3")
    kwargs = client.connection_pool.connection_kwargs
    assert (kwargs["path"], kwargs["db"]) == ("/tmp/r.sock", 3)
    assert client_from_url("redis://127.0.0.1:6379/13").connection_pool.connection_kwargs["db"] == 13


def test_now_is_accepted_with_or_without_a_zone() -> None:
    now = datetime.now(UTC)
    assert naive_utc(now) == now.replace(tzinfo=None)


def test_a_new_events_row_is_a_trace_event_row_but_its_id() -> None:
    """`NewEvent` stands in for a `TraceEvent` model until written: its INSERT values are the table's
    columns but the id, as the model would have given them."""
    from storage._common import row_values
    from storage._records import new_event

    event = new_event(investigation_id="i", step_key="s", kind="route", hop=2, data={"r": 1})
    model = TraceEvent(investigation_id="i", step_key="s", kind="route", hop=2, data={"r": 1}, at=event.at)
    assert event.row() == row_values(model)
    assert list(event.row()) == [c.name for c in TraceEvent.__table__.columns if c.name != "id"]  # type: ignore[attr-defined]
    assert new_event(investigation_id="i", step_key="s", kind="k", data={}).hop == 0
