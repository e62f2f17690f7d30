"""k8s/ (kustomize base + example overlay) parses, lists every file, and agrees with the app: images,
variables (Settings), probes, worker groups against the queue table, KEDA list names against the broker's
key prefix, disruption budgets and services against the Deployments they select."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from config.settings import Settings
from tests.unit.deploy.settings_env import EXTERNAL, ROOT, env_to_field, settings_from_env
from workers.app import celery_config
from workers.names import ALL_QUEUES

BASE = ROOT / "k8s" / "base"
OVERLAY = ROOT / "k8s" / "overlays" / "example"
RABBITMQ = ROOT / "k8s" / "overlays" / "rabbitmq"  # the example with Celery on RabbitMQ
WORKERS = {"sleuth-worker-plan": {"plan"}, "sleuth-worker-retrieve": {"retrieve", "reduce"},
           "sleuth-worker-llm": {"llm"}, "sleuth-worker-deliver": {"deliver"},
           "sleuth-worker-tools": {"tools"}, "sleuth-worker-sources": {"sources"}}
DEPLOYMENTS = {"sleuth-api", "sleuth-beat", "sleuth-flower", *WORKERS}


def load(folder: Path) -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization.get("resources", []):
        path = folder / name
        if path.is_dir():
            continue
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


@pytest.fixture(scope="module")
def base() -> list[dict[str, Any]]:
    return load(BASE)


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    only: dict[str, Any]
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_kustomization_lists_every_manifest_and_nothing_else() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    files = {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(files)
    overlay = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    assert overlay["resources"] == ["../../base"]
    patch_files = {p["path"] for p in overlay["patches"] if "path" in p}
    assert patch_files == {p.name for p in OVERLAY.glob("*.yaml")} - {"kustomization.yaml"}


def test_every_document_is_well_formed(base: list[dict[str, Any]]) -> None:
    for doc in base:
        assert {"apiVersion", "kind", "metadata"} <= set(doc), doc
        assert doc["metadata"].get("name"), doc
        assert "namespace" not in doc["metadata"]  # the overlay decides
    assert not [d for d in base if d["kind"] == "Secret"], "secrets are never committed"


def test_deployments_for_api_each_worker_group_beat_and_flower(base: list[dict[str, Any]]) -> None:
    deployments = by_kind(base, "Deployment")
    assert set(deployments) == DEPLOYMENTS
    for name, deployment in deployments.items():
        spec = deployment["spec"]
        labels = spec["template"]["metadata"]["labels"]
        assert spec["selector"]["matchLabels"].items() <= labels.items(), name
        pod = spec["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        main = container(deployment)
        assert main["image"] == "sleuth", name  # one image; the overlay pins registry and tag
        refs = [next(iter(ref.values()))["name"] for ref in main["envFrom"]]
        assert refs == ["sleuth-config", "sleuth-secrets"], name
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(main["resources"][kind]), f"{name} {kind}"
        assert main["securityContext"]["allowPrivilegeEscalation"] is False, name
        assert "livenessProbe" in main, name
        assert "readinessProbe" in main or name == "sleuth-beat", name  # beat serves nothing to be ready for


def test_api_probes_readyz_and_healthz(base: list[dict[str, Any]]) -> None:
    api = container(by_kind(base, "Deployment")["sleuth-api"])
    port = int(option(api["args"], "--port"))
    assert api["ports"] == [{"name": "http", "containerPort": port}]
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert option(api["args"], "--host") == "0.0.0.0"


def test_worker_groups_cover_every_queue_and_ping_their_own_node(base: list[dict[str, Any]]) -> None:
    deployments = by_kind(base, "Deployment")
    seen: list[str] = []
    for name, queues in WORKERS.items():
        deployment = deployments[name]
        main = container(deployment)
        assert main["args"][0] == "worker"
        assert set(option(main["args"], "-Q").split(",")) == queues, name
        seen += option(main["args"], "-Q").split(",")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            command = main[probe]["exec"]["command"]
            assert command[:2] == ["python", "-c"] and "control.ping" in command[2], f"{name} {probe}"
            assert command[3] == option(main["args"], "--name"), f"{name} {probe}"
        assert "replicas" not in deployment["spec"], f"{name}: KEDA owns the replica count"
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert grace > Settings().workers.task_time_limit, f"{name}: a stop must outlast the longest task"
    assert sorted(seen) == sorted(ALL_QUEUES)


def test_beat_is_a_single_replica_that_is_never_doubled(base: list[dict[str, Any]]) -> None:
    beat = by_kind(base, "Deployment")["sleuth-beat"]
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    assert container(beat)["args"] == ["beat"]
    assert "beat-schedule" in container(beat)["livenessProbe"]["exec"]["command"][2]


def test_services_select_deployments_and_name_their_ports(base: list[dict[str, Any]]) -> None:
    deployments = by_kind(base, "Deployment")
    services = by_kind(base, "Service")
    assert set(services) == {"sleuth-api", "sleuth-flower"}
    for name, service in services.items():
        selector = service["spec"]["selector"]
        (target,) = [d for d in deployments.values()
                     if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()]
        port_names = {p["name"] for p in container(target).get("ports", [])}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= port_names, name
    flower = container(deployments["sleuth-flower"])
    assert flower["livenessProbe"]["httpGet"]["path"] == "/healthcheck"


def test_disruption_budgets_cover_api_and_workers_not_beat(base: list[dict[str, Any]]) -> None:
    deployments = by_kind(base, "Deployment")
    covered = set()
    for name, pdb in by_kind(base, "PodDisruptionBudget").items():
        assert ("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"]), name
        selector = pdb["spec"]["selector"]["matchLabels"]
        matches = [n for n, d in deployments.items()
                   if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()]
        assert len(matches) == 1, name
        covered |= set(matches)
    assert covered == {"sleuth-api", *WORKERS}
    api_pdb = by_kind(base, "PodDisruptionBudget")["sleuth-api"]["spec"]
    assert api_pdb["minAvailable"] < deployments["sleuth-api"]["spec"]["replicas"]


def test_keda_scales_each_worker_group_on_its_prefixed_queue_lists(base: list[dict[str, Any]]) -> None:
    prefix = by_kind(base, "ConfigMap")["sleuth-config"]["data"]["SLEUTH_REDIS_PREFIX"]
    config = celery_config(
        Settings.model_validate({"redis_url": "redis://redis:6379/0", "redis_prefix": prefix})
    )
    options = config["broker_transport_options"]
    assert isinstance(options, dict)
    keyprefix = options["global_keyprefix"]
    auths = by_kind(base, "TriggerAuthentication")
    scaled = by_kind(base, "ScaledObject")
    assert set(scaled) == set(WORKERS)
    for name, obj in scaled.items():
        assert obj["spec"]["scaleTargetRef"]["name"] == name
        assert 1 <= obj["spec"]["minReplicaCount"] <= obj["spec"]["maxReplicaCount"]
        lists = set()
        for trigger in obj["spec"]["triggers"]:
            assert trigger["type"] == "redis"
            meta = trigger["metadata"]
            assert ":" in meta["address"] and int(meta["listLength"]) > 0
            assert meta["databaseIndex"] == "0"
            lists.add(meta["listName"])
            auth = auths[trigger["authenticationRef"]["name"]]
            assert auth["spec"]["secretTargetRef"][0]["name"] == "sleuth-secrets"
        assert lists == {f"{keyprefix}{q}" for q in WORKERS[name]}, name


def test_config_and_secret_keys_are_settings_and_configure_production() -> None:
    config = by_kind(load(BASE), "ConfigMap")["sleuth-config"]["data"]
    overlay_config = yaml.safe_load((OVERLAY / "configmap.yaml").read_text())["data"]
    secret_keys = {}
    for line in (OVERLAY / "secrets.env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, value = line.split("=", 1)
            secret_keys[key] = value
    assert all("CHANGE-ME" in v for v in secret_keys.values()), "the example holds placeholders only"
    known = set(env_to_field())
    for source, keys in (("base ConfigMap", config), ("overlay ConfigMap", overlay_config)):
        assert not sorted(set(keys) - known), f"{source}: not Settings variables"
    assert not sorted(set(secret_keys) - known - set(EXTERNAL)), "secrets.env.example: unknown keys"
    assert not set(config) & set(secret_keys), "a value is either configuration or secret, not both"
    env = {**config, **overlay_config, **{k: v for k, v in secret_keys.items() if k not in EXTERNAL}}
    settings = settings_from_env(env)
    assert (settings.engines.lexical_backend, settings.engines.vector_backend) == (
        "elasticsearch",
        "weaviate",
    )
    assert settings.database_url and settings.database_url.startswith("postgresql+psycopg://")
    assert settings.redis_url and settings.engines.elasticsearch_url and settings.engines.weaviate_url
    assert settings.engines.elasticsearch_api_key and settings.engines.weaviate_api_key
    assert "FLOWER_BASIC_AUTH" in secret_keys and "REDIS_PASSWORD" in secret_keys


def test_overlay_pins_the_image_the_base_uses() -> None:
    overlay = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    (image,) = overlay["images"]
    assert image["name"] == "sleuth" and image["newTag"] and "/" in image["newName"]


@pytest.mark.parametrize("folder", [BASE, OVERLAY], ids=["base", "overlay"])
def test_kustomize_builds(folder: Path) -> None:
    """`kubectl kustomize` when kubectl is installed: the overlay's patches really apply."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on this machine")
    result = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    images = {container(d)["image"] for d in docs if d["kind"] == "Deployment"}
    assert len(images) == 1
    if folder == OVERLAY:
        assert images == {"registry.example.com/sleuth:0.1.0"}
        assert {d["metadata"].get("namespace") for d in docs} == {"sleuth"}
        addresses = {t["metadata"]["address"] for d in docs if d["kind"] == "ScaledObject"
                     for t in d["spec"]["triggers"]}
        assert addresses == {"redis-master.data.svc.cluster.local:6379"}
        config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
        assert config["SLEUTH_REDIS_PREFIX"] == "sleuth" and config["WEAVIATE_URL"].startswith("http")


def test_the_rabbitmq_overlay_scales_each_worker_group_on_its_quorum_queues() -> None:
    """`kubectl kustomize k8s/overlays/rabbitmq`: the example, every ScaledObject on KEDA's RabbitMQ scaler
    over its group's queues (named as `celery_config` names them on an amqp:// broker), authenticated with the
    broker URL the pods read (SLEUTH_BROKER_URL in sleuth-secrets), and no Redis trigger left."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on this machine")
    result = subprocess.run([kubectl, "kustomize", str(RABBITMQ)], capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert {d["metadata"].get("namespace") for d in docs} == {"sleuth"}
    config = celery_config(Settings.model_validate({"redis_url": "redis://redis:6379/0",
                                                    "broker_url": "amqp://u:p@rabbitmq:5672/sleuth"}))
    queues: Any = config["task_queues"]
    quorum = {q.name for q in queues if q.queue_arguments == {"x-queue-type": "quorum"}}
    (auth,) = [d for d in docs if d["kind"] == "TriggerAuthentication"]
    assert auth["metadata"]["name"] == "sleuth-rabbitmq"
    assert auth["spec"]["secretTargetRef"] == [{"parameter": "host", "name": "sleuth-secrets",
                                                "key": "SLEUTH_BROKER_URL"}]
    scaled = by_kind(docs, "ScaledObject")
    assert set(scaled) == set(WORKERS)
    for name, obj in scaled.items():
        assert 1 <= obj["spec"]["minReplicaCount"] <= obj["spec"]["maxReplicaCount"]
        names = set()
        for trigger in obj["spec"]["triggers"]:
            assert trigger["type"] == "rabbitmq" and trigger["authenticationRef"]["name"] == "sleuth-rabbitmq"
            meta = trigger["metadata"]
            assert meta["protocol"] == "amqp" and meta["mode"] == "QueueLength" and int(meta["value"]) > 0
            names.add(meta["queueName"])
        assert names == WORKERS[name] and names <= quorum, name
    for deployment in by_kind(docs, "Deployment").values():  # the broker URL reaches every pod
        refs = [e.get("secretRef", {}).get("name") for e in container(deployment).get("envFrom", [])]
        assert "sleuth-secrets" in refs, deployment["metadata"]["name"]
