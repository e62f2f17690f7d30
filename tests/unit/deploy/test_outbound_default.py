"""Private delivery targets are refused by default: nothing in Settings, compose or k8s turns the operator
override `SLEUTH_WEBHOOK_ALLOW_PRIVATE` on (tenants open hosts with `--allow-host` instead)."""

from __future__ import annotations

from pathlib import Path

from config.settings import SecuritySettings

ROOT = Path(__file__).resolve().parents[3]


def test_private_targets_are_refused_by_default() -> None:
    assert SecuritySettings.model_fields["webhook_allow_private"].default is False


def test_no_deployment_file_enables_private_targets() -> None:
    files = [ROOT / "docker-compose.yml", *sorted((ROOT / "k8s").rglob("*.y*ml"))]
    assert len(files) > 1
    for path in files:
        text = path.read_text()
        for line in text.splitlines():
            if "WEBHOOK_ALLOW_PRIVATE" in line:
                assert "true" not in line.lower() and "1" not in line.split(":")[-1], f"{path}: {line}"
