"""The production manifests hand every API, worker and beat container the keys all replicas must share
(SLEUTH_SECRET_KEY, SLEUTH_SESSION_SECRET, SLEUTH_METRICS_TOKEN) from one place: in compose, variables
that must be set (`${VAR:?...}`, from `.env`); in k8s, the Secret `sleuth-secrets`, read by name in each
Deployment as kustomize renders it (`kubectl kustomize`, base and example overlay), so a Secret missing
a key keeps the pods from starting. The checks run on the rendered output; a copy of the base without the
patch shows they catch the omission."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.deploy.settings_env import ROOT

SHARED = ("SLEUTH_SECRET_KEY", "SLEUTH_SESSION_SECRET", "SLEUTH_METRICS_TOKEN")
SECRET = "sleuth-secrets"
K8S = ROOT / "k8s"
COMPOSE = ROOT / "docker-compose.yml"
_REQUIRED = re.compile(r"^\$\{(\w+):\?[^}]+\}$")


def keyed(component: str) -> bool:
    """API, workers and beat run Sleuth's code against the database and Redis; Flower only watches."""
    return component == "api" or component == "beat" or component.startswith("worker")


def render(folder: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on this machine: the k8s manifests are rendered with `kubectl kustomize`")
    done = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def missing_in_k8s(docs: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Deployment → the shared keys its container does not read from the Secret by name."""
    missing: dict[str, list[str]] = {}
    for doc in docs:
        if doc["kind"] != "Deployment":
            continue
        pod = doc["spec"]["template"]
        if not keyed(pod["metadata"]["labels"]["app.kubernetes.io/component"]):
            continue
        (main,) = pod["spec"]["containers"]
        refs = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef", {}) for e in main.get("env", [])}
        absent = [key for key in SHARED
                  if refs.get(key, {}).get("name") != SECRET or refs[key].get("key") != key
                  or refs[key].get("optional", False)]
        if absent:
            missing[doc["metadata"]["name"]] = absent
    return missing


@pytest.mark.parametrize("folder", [K8S / "base", K8S / "overlays" / "example"], ids=["base", "overlay"])
def test_every_keyed_deployment_reads_the_shared_keys_from_the_secret(folder: Path) -> None:
    docs = render(folder)
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert len([d for d in deployments
                if keyed(d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"])]) >= 7
    assert missing_in_k8s(docs) == {}
    (config,) = [d for d in docs if d["kind"] == "ConfigMap"]
    assert config["data"]["SLEUTH_ENV"] == "production"


def test_the_check_catches_a_base_without_the_keys(tmp_path: Path) -> None:
    copy = tmp_path / "base"
    shutil.copytree(K8S / "base", copy)
    kustomization = yaml.safe_load((copy / "kustomization.yaml").read_text())
    kustomization.pop("patches")
    (copy / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    missing = missing_in_k8s(render(copy))
    assert "sleuth-api" in missing and "sleuth-beat" in missing and "sleuth-worker-deliver" in missing
    assert all(keys == list(SHARED) for keys in missing.values())


def test_the_secret_example_and_the_scrapes_carry_the_keys() -> None:
    example = (K8S / "overlays" / "example" / "secrets.env.example").read_text()
    assert {line.split("=")[0] for line in example.splitlines() if "=" in line and not line.startswith("#")} \
        >= set(SHARED)
    monitor = yaml.safe_load((K8S / "monitoring" / "servicemonitor.yaml").read_text())
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["authorization"]["credentials"] == {"name": SECRET, "key": "SLEUTH_METRICS_TOKEN"}


def test_compose_requires_the_shared_keys_in_every_keyed_container() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    keyed_services = {name: svc for name, svc in compose["services"].items() if keyed(name)}
    assert {"api", "beat", "worker-deliver"} <= set(keyed_services)
    for name, service in keyed_services.items():
        env = service["environment"]
        assert env.get("SLEUTH_ENV") == "production", name
        for key in SHARED:
            required = _REQUIRED.match(str(env.get(key, "")))
            assert required and required.group(1) == key, f"{name}: {key} is not a required variable"
    prometheus = compose["services"]["prometheus"]
    assert prometheus["secrets"] == ["metrics-token"]
    assert compose["secrets"]["metrics-token"] == {"environment": "SLEUTH_METRICS_TOKEN"}
    scrape = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    (job,) = scrape["scrape_configs"]
    assert job["authorization"]["credentials_file"] == "/run/secrets/metrics-token"
