"""The delivery tests' `services`: Settings on the test's database and Redis prefix with fast retry knobs
(`helpers.make_services`); a module adds or changes Settings fields by overriding `services_settings`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bootstrap import Services
from tests.integration.delivery.helpers import make_services


@pytest.fixture()
def services_settings() -> dict[str, Any]:
    return {}


@pytest.fixture()
def services(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str,
             services_settings: dict[str, Any]) -> Iterator[Services]:
    svc = make_services(tmp_path, db_url, redis_url, redis_prefix, **services_settings)
    yield svc
    svc.engine.dispose()
