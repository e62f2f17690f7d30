"""A real queue for the integration tests: Redis, Celery worker subprocesses, a database, the embedded search
engines with a small corpus (`tests/support/stack.py`).

    shared_stack  module    one stack and ONE worker for the whole module, per database (sqlite, postgresql)
    queue         function  the module's worker, seen as a tenant of the test's own (own corpus, own
                            investigations): what most queue tests need
    stack         function  a stack of the test's own, no worker started: for tests that start workers
                            with other queues, beat, environment, or kill them
    quiet_stack   function  the same, with no trace-event observers: what counts a step's statements needs
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storage._records import EVENT_OBSERVERS
from tests.support.stack import CORPUS, Stack, build_stack, with_new_tenant
from tests.support.wait import wait_until

__all__ = ["CORPUS", "Stack", "build_stack", "wait_until"]


@pytest.fixture(scope="module")
def shared_stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str, module_redis_prefix: str,
                 module_db_url: str) -> Iterator[Stack]:
    built = build_stack(tmp_path_factory.mktemp("stack") / "home", redis_url, module_redis_prefix,
                        database_url=module_db_url)
    try:
        built.start_worker()
        built.wait_ready()
        yield built
    finally:
        built.stop_workers()
        built.services.engine.dispose()


@pytest.fixture()
def queue(shared_stack: Stack) -> Stack:
    return with_new_tenant(shared_stack)


@pytest.fixture()
def stack(
    tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str, broker_url: str | None
) -> Iterator[Stack]:
    """A fresh stack per test, on SQLite and on PostgreSQL (the `db_url` fixture's two params), on the Redis
    broker unless the test parametrizes `broker_url` with "rabbitmq"."""
    built = build_stack(
        tmp_path / "home", redis_url, redis_prefix, database_url=db_url, broker_url=broker_url
    )
    try:
        yield built
    finally:
        built.stop_workers()


@pytest.fixture()
def quiet_stack(tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> Iterator[Stack]:
    """`stack`, counting the steps' own statements only: trace-event observers run after a commit and read
    what they measure (with metrics on, a decision's observer reads its hop for the hop's duration); whether
    an earlier test in this process installed them must not change the counts."""
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    installed = list(EVENT_OBSERVERS)
    EVENT_OBSERVERS.clear()
    try:
        yield built
    finally:
        EVENT_OBSERVERS[:] = installed
        built.services.engine.dispose()
