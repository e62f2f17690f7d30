"""docs/production.md documents every setting (its table is generated from Settings and must not drift)
and the steps and checks the issue asks for."""

from __future__ import annotations

import pytest

from config.settings import Settings
from tests.unit.deploy.settings_env import DOC, EXTERNAL, documented_table, env_names, env_table

pytestmark = pytest.mark.unit

REGENERATE = ("regenerate the table between the settings-table markers with "
              "`.venv/bin/python -m tests.unit.deploy.settings_env`")


def test_every_setting_has_a_meaning() -> None:
    missing = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert not missing, f"Settings fields without a description (the docs table needs one): {missing}"


def test_the_settings_table_lists_every_variable_with_its_default() -> None:
    documented = documented_table(DOC.read_text())
    for name, field in Settings.model_fields.items():
        assert f"| `{env_names(name, field)[0]}`" in documented, f"{name} is not documented; {REGENERATE}"
    assert documented == env_table(), REGENERATE


def test_the_guide_covers_compose_kubernetes_and_real_engine_verification() -> None:
    text = DOC.read_text()
    for step in ("docker compose up", "sleuth tenants create", "sleuth ingest", "sleuth ask",
                 "kubectl apply -k k8s/overlays/example", ".venv/bin/pytest tests/conformance",
                 "ELASTICSEARCH_URL=", "WEAVIATE_URL=", "sleuth:celery:retrieve"):
        assert step in text, step
    assert "shared index" in text.lower() and "per tenant" in text.lower()
    for name in EXTERNAL:
        assert f"`{name}`" in text, name
