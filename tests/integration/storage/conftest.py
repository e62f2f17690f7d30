"""Fixtures of the storage tests: tenants and investigations on the parametrized test database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlmodel import Session

from investigation.state import Evidence, Grade
from storage.models import Investigation, Tenant
from storage.repositories import create_investigation, create_tenant
from storage.secrets import SecretBox


def new_investigation(session: Session, tenant: Tenant, **overrides: Any) -> Investigation:
    kwargs: dict[str, Any] = {
        "question": "Which plan includes SSO?",
        "mode": "agentic",
        "callback": None,
        "budget": {"max_hops": 3},
        "idempotency_key": None,
        "deadline_seconds": 120,
    }
    kwargs.update(overrides)
    inv, created = create_investigation(session, tenant=tenant, **kwargs)
    assert created
    return inv


def make_evidence(eid: str, hop: int = 1, score: float = 0.5, grade: Grade = Grade.CORRECT) -> Evidence:
    return Evidence(
        id=eid,
        chunk_id=f"c-{eid}",
        source_id=f"doc-{eid}",
        title=f"T {eid}",
        text=f"text {eid}",
        score=score,
        grade=grade,
        hop=hop,
        query="which plan",
        url=f"https://kb/{eid}",
    )


@pytest.fixture
def tenant(session: Session, secret_box: SecretBox) -> Tenant:
    return create_tenant(session, name="acme", box=secret_box)[0]


@pytest.fixture
def other_tenant(session: Session, secret_box: SecretBox) -> Tenant:
    return create_tenant(session, name="globex", box=secret_box)[0]


@pytest.fixture
def investigation(session: Session, tenant: Tenant) -> Investigation:
    return new_investigation(session, tenant)


@pytest.fixture
def statements(db_engine: Engine) -> Iterator[list[str]]:
    """Every SQL statement the test's engine sends from now on."""
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    event.listen(db_engine, "before_cursor_execute", record)
    yield sent
    event.remove(db_engine, "before_cursor_execute", record)


def sql(statements: list[str]) -> list[str]:
    """The statements' verbs, BEGIN left out (PostgreSQL's driver sends none): ["UPDATE", "INSERT", ...]."""
    return [s.split()[0] for s in statements if not s.startswith("BEGIN")]
