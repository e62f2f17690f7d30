"""docs/settings.md documents every setting (its table is generated from Settings and must not drift) and
docs/production.md the deployment steps and checks."""

from __future__ import annotations

import re
from pathlib import Path

from config.settings import settings_fields
from tests.unit.deploy.settings_env import DOC, EXTERNAL, documented_table, env_table

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = (
    "investigation",
    "heuristic",
    "app",
    "bootstrap",
    "adapters",
    "storage",
    "tasks",
    "workers",
    "api",
    "cli",
    "observability",
    "config",
)

REGENERATE = ("regenerate the table between the settings-table markers with "
              "`.venv/bin/python -m tests.unit.deploy.settings_env`")


def test_every_setting_has_a_meaning() -> None:
    missing = [name for _, _, name, field in settings_fields() if not (field.description or "").strip()]
    assert not missing, f"Settings fields without a description (the docs table needs one): {missing}"


def test_the_settings_table_lists_every_variable_with_its_default() -> None:
    documented = documented_table(DOC.read_text())
    for variables, _, name, _ in settings_fields():
        assert f"| `{variables[0]}`" in documented, f"{name} is not documented; {REGENERATE}"
    assert documented == env_table(), REGENERATE


def test_the_guide_covers_compose_kubernetes_and_real_engine_verification() -> None:
    text = (ROOT / "docs" / "production.md").read_text()
    for step in ("docker compose up", "sleuth tenants create", "sleuth ingest", "sleuth ask",
                 "kubectl apply -k k8s/overlays/example", ".venv/bin/pytest tests/conformance",
                 "ELASTICSEARCH_URL=", "WEAVIATE_URL=", "sleuth:celery:retrieve"):
        assert step in text, step
    assert "shared index" in text.lower() and "per tenant" in text.lower()
    reference = DOC.read_text()
    for name in EXTERNAL:
        assert f"`{name}`" in reference, name


def test_every_setting_is_read_by_the_product() -> None:
    """A documented variable nothing reads is a promise the code does not keep (`settings.x`, or the name as a
    string where fields are read by a list such as BUDGET_FIELDS)."""
    source = "\n".join(
        path.read_text()
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "config" / "settings.py"
    )
    source += "\n".join(line for line in (ROOT / "config" / "settings.py").read_text().splitlines()
                        if "self." in line)  # a validator that reads one field for another
    unread = [name for _, _, name, _ in settings_fields()
              if not re.search(rf"\.{name}\b|[\"']{name}[\"']", source)]
    assert not unread, f"settings nothing reads (wire or remove them): {unread}"
