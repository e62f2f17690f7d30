"""`submit_investigation` is the one way in: the CLI path applies the tenant's caps exactly like the API,
stores the effective budget once, and an enqueue failure leaves a failed investigation, not a stuck one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import select

from app.intake import parse_request, submit_investigation
from bootstrap import Services
from cli.commands import create_and_launch
from config.settings import Settings
from investigation.errors import TransientError, ValidationFailed
from storage import repositories as repo
from storage.models import Investigation


@pytest.fixture()
def services(tmp_path: Path, db_url: str) -> Iterator[Services]:
    svc = Services(Settings(home=tmp_path / "home", database_url=db_url, max_hops=3))
    with svc.session() as session:
        repo.create_tenant(
            session, name="capped", box=svc.secret_box(), limits={"max_hops": 2, "max_retrieval_calls": 5}
        )
    yield svc
    svc.engine.dispose()


def test_the_cli_path_applies_tenant_caps_and_stores_the_budget(services: Services) -> None:
    launched: list[str] = []
    inv_id = create_and_launch(services, "capped", "Which plan includes SCIM?", "agentic",
                               audience="customer", launch=launched.append)
    assert launched == [inv_id]
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        assert inv.budget["max_hops"] == 2 and inv.budget["max_retrieval_calls"] == 5
        assert inv.budget["deadline_seconds"] == services.settings.limits.deadline_seconds
        assert inv.audience == "customer"


def test_a_caller_holding_the_tenants_row_is_not_read_it_again(services: Services) -> None:
    """A bench asks every question of one tenant: it hands the row it read, and the tenant's caps apply
    as when the intake reads it; a row of another tenant is not taken for the one named."""
    from sqlalchemy import event

    with services.session() as session:
        capped = repo.get_tenant_by_name(session, name="capped")
    sent: list[str] = []
    record = lambda _c, _cur, statement, *_a: sent.append(statement)
    event.listen(services.engine, "before_cursor_execute", record)
    try:
        held = create_and_launch(
            services, "capped", "Which plan?", "agentic", launch=lambda _i: None, tenant=capped
        )
        assert not any("FROM tenant" in s for s in sent)
        sent.clear()
        renamed = capped.model_copy(update={"name": "other"})
        again = create_and_launch(services, "capped", "Which plan?", "agentic", launch=lambda _i: None,
                                  tenant=renamed)
        assert any("FROM tenant" in s for s in sent)  # not the tenant named: read by its name
    finally:
        event.remove(services.engine, "before_cursor_execute", record)
    with services.session() as session:
        for inv_id in (held, again):
            inv = repo.get_investigation(session, investigation_id=inv_id)
            assert inv.tenant_id == capped.id and inv.budget["max_hops"] == 2


def test_a_request_over_the_tenant_cap_writes_nothing(services: Services) -> None:
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name="capped")
    request = parse_request({"question": "q", "budget": {"max_hops": 3}})
    with pytest.raises(ValidationFailed):
        submit_investigation(services, tenant=tenant, request=request, launch=lambda _i: None)
    with services.session() as session:
        assert session.exec(select(Investigation)).all() == []


def test_enqueue_failure_marks_the_investigation_failed(services: Services) -> None:
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name="capped")

    def broken(_inv_id: str) -> None:
        raise ConnectionError("broker unreachable")

    request = parse_request({"question": "q", "context": {"requester": {"email": "ann@example.com"}}})
    with pytest.raises(TransientError):
        submit_investigation(services, tenant=tenant, request=request, launch=broken)
    with services.session() as session:
        (inv,) = session.exec(select(Investigation)).all()
        assert inv.status == "failed" and "broker unreachable" in (inv.error or "")
        assert inv.context["requester"] == {"email": "ann@example.com"}
