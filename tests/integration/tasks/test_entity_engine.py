"""The `entities` engine in the loop: with SLEUTH_ENTITY_ENGINE on, ingest fills the entity index beside the
lexical one, the first hop's chord has no `entities` slot, a follow-up hop's has one — its own query, seeded
by the names the graded evidence holds, searched by no other engine — and its searches are traced like
every engine's (made-up two-document chain)."""

from __future__ import annotations

from pathlib import Path

from adapters.search.ingest import SourceDocument, ingest
from app.intake import parse_request, submit_investigation
from storage import repositories as repo
from tasks import inline
from tests.support.stack import build_stack

DOCS = [
    SourceDocument(
        id="annals",
        title="Annals of Quiet Harbours",
        text="Annals of Quiet Harbours is a quarterly journal published by the Brackwater Maritime "
        "Society since 1901.",
    ),
    SourceDocument(
        id="society",
        title="Brackwater Maritime Society",
        text="The Brackwater Maritime Society was founded in 1884 in Saltmere. Its first president "
        "was Ilse Varnow, a harbour pilot.",
    ),
    SourceDocument(id="pilots", title="Harbour pilots", text="A harbour pilot guides ships into port."),
]
QUESTION = "Who was the first president of the society that publishes Annals of Quiet Harbours?"


def test_follow_up_hops_add_the_entities_engine_and_trace_it(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url, entity_engine=True)
    services = stack.services
    assert list(services.backends) == ["bm25", "vector", "entities"]
    ingest(DOCS, tenant=stack.tenant_id, backends=list(services.backends.values()))
    # Every chunk the lexical engine holds (the stack's own sample corpus too) is in the entity index.
    assert services.backends["entities"].count(stack.tenant_id) == services.backends["bm25"].count(
        stack.tenant_id
    )

    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
    request = parse_request({"question": QUESTION, "audience": "agent"})
    inv_id = submit_investigation(services, tenant=tenant, request=request, launch=lambda _i: None).id
    inline.run(services, inv_id, deliver=False)

    with services.session() as session:
        events = repo.list_events(session, investigation_id=inv_id)
    hops = {e.hop: e.data["engines"] for e in events if e.kind == "hop"}
    assert hops[1] == ["bm25", "vector"]
    assert len(hops) >= 2 and all(
        engines == ["bm25", "vector", "entities"] for n, engines in hops.items() if n > 1
    )
    searched = [e.data for e in events if e.kind == "retrieval" and e.data.get("engine") == "entities"]
    assert searched and all(
        e.hop > 1 for e in events if e.kind == "retrieval" and e.data.get("engine") == "entities"
    )
    # One slot per follow-up hop: the entity query, which no other engine searches.
    retrievals = [e for e in events if e.kind == "retrieval" and e.hop > 1]
    seeded = {e.data["query"] for e in retrievals if e.data.get("engine") == "entities"}
    assert len(searched) == len({e.hop for e in retrievals})
    assert not any(e.data["query"] in seeded for e in retrievals if e.data.get("engine") != "entities")
