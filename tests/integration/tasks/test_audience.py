"""Audience end to end (issue 10): a customer investigation never retrieves, grades or cites an internal
document; an agent's may, and its citation says "internal"; a re-ingest with another visibility applies
to the next investigation at once (the sub-query cache is keyed by the scope and the corpus version)."""

from __future__ import annotations

from pathlib import Path

from adapters.search.ingest import SourceDocument, ingest
from app.corpus import ingest_documents
from bootstrap import Services
from investigation.state import Visibility
from storage import repositories as repo
from storage.models import EvidenceRecord, Investigation
from tasks import inline
from tests.support.stack import build_stack

QUESTION = "By when must a customer submit an SLA credit claim?"
RUNBOOK = SourceDocument(
    id="runbook-sla-credits",
    title="Runbook: SLA credit claims (internal)",
    visibility=Visibility.INTERNAL,
    text="INTERNAL. An SLA credit claim must arrive within 30 days after the end of the month; team leads "
         "may "
    "approve one late SLA credit claim per customer per year as a goodwill exception.",
)


def _ask(services: Services, tenant_name: str, audience: str) -> tuple[Investigation, list[EvidenceRecord]]:
    from app.intake import parse_request, submit_investigation

    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=tenant_name)
    request = parse_request({"question": QUESTION, "audience": audience})
    inv_id = submit_investigation(services, tenant=tenant, request=request, launch=lambda _i: None).id
    inline.run(services, inv_id, deliver=False)
    with services.session() as session:
        return (repo.get_investigation(session, investigation_id=inv_id),
                repo.list_evidence(session, investigation_id=inv_id))


def test_customers_never_see_internal_documents_and_agents_see_them_marked(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url,
                        subquery_cache_ttl=600)
    services = stack.services
    ingest([RUNBOOK], tenant=stack.tenant_id, backends=list(services.backends.values()))

    agent, agent_evidence = _ask(services, stack.tenant_name, "agent")
    assert any(e.source_id == RUNBOOK.id and e.visibility == "internal" for e in agent_evidence)
    for c in agent.citations:
        assert bool(c.get("internal")) == (c["source_id"] == RUNBOOK.id)

    customer, customer_evidence = _ask(services, stack.tenant_name, "customer")
    assert all(e.source_id != RUNBOOK.id for e in customer_evidence)  # never retrieved, never graded
    assert all(c["source_id"] != RUNBOOK.id and not c.get("internal") for c in customer.citations)
    assert "goodwill" not in (customer.answer or "")

    # Published: the next customer investigation may use it (cached hits of the old corpus are not reused).
    ingest_documents(services, [RUNBOOK.model_copy(update={"visibility": Visibility.PUBLIC})],
                     tenant_id=stack.tenant_id)
    _, published = _ask(services, stack.tenant_name, "customer")
    assert any(e.source_id == RUNBOOK.id and e.visibility == "public" for e in published)
