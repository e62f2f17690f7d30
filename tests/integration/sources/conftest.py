"""A stack (real Redis, a database on SQLite and PostgreSQL, the embedded engines) for source syncs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.stack import Stack, build_stack


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> Iterator[Stack]:
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    try:
        yield built
    finally:
        built.stop_workers()
        built.services.engine.dispose()
