"""docker-compose.yml is complete and consistent with the app: every service, health check, dependency
condition and volume, the worker groups against the queue table, and every variable against Settings."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from adapters.delivery.channels import SmtpSpec, parse_channel
from adapters.delivery.outbound import OutboundGuard, OutboundRefused
from tests.unit.deploy.settings_env import EXTERNAL, ROOT, env_to_field, settings_from_env
from workers.names import ALL_QUEUES

COMPOSE = ROOT / "docker-compose.yml"
ENGINES = {"redis", "postgres", "elasticsearch", "weaviate", "mailpit"}
APP = {
    "api",
    "worker-plan",
    "worker-retrieve",
    "worker-llm",
    "worker-deliver",
    "worker-tools",
    "worker-sources",
    "beat",
    "flower",
}
WORKER_GROUPS = {"worker-plan": {"plan"}, "worker-retrieve": {"retrieve", "reduce"}, "worker-llm": {"llm"},
                 "worker-deliver": {"deliver"}, "worker-tools": {"tools"},
                 "worker-sources": {"sources"}}
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


@pytest.fixture(scope="module")
def compose_services(compose: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = compose["services"]
    return found


def interpolate(value: str) -> str:
    """`${VAR:-default}` as Compose resolves it with nothing set in the shell or `.env`."""
    return _VAR.sub(lambda m: m.group(2) or "", value)


def app_env(service: dict[str, Any]) -> dict[str, str]:
    return {k: interpolate(str(v)) for k, v in service["environment"].items()}


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


MONITORING = {"prometheus", "grafana"}  # behind the `monitoring` profile
BROKERS = {"rabbitmq"}  # behind the `rabbitmq` profile: Celery's broker instead of Redis


def test_every_service_is_there(compose_services: dict[str, Any]) -> None:
    assert set(compose_services) == ENGINES | APP | MONITORING | BROKERS
    assert all(compose_services[name].get("profiles") == ["monitoring"] for name in MONITORING)
    assert compose_services["rabbitmq"].get("profiles") == ["rabbitmq"]


def test_every_service_has_a_health_check(compose_services: dict[str, Any]) -> None:
    for name, service in compose_services.items():
        check = service.get("healthcheck")
        assert check and check.get("test"), f"{name} has no health check"
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name
        assert {"interval", "timeout", "retries"} <= set(check), name


def test_dependencies_wait_for_health(compose_services: dict[str, Any]) -> None:
    for name, service in compose_services.items():
        depends = service.get("depends_on", {})
        assert isinstance(depends, dict), f"{name}: depends_on needs conditions, not a bare list"
        for target, spec in depends.items():
            assert target in compose_services, f"{name} depends on unknown {target}"
            # A broker behind a profile is waited for only when the profile is on.
            optional = {"required": False} if target in BROKERS else {}
            assert spec == {"condition": "service_healthy", **optional}, f"{name} -> {target}"
    engines = {"redis", "postgres", "elasticsearch", "weaviate"}
    for name in APP - {"beat", "flower"}:
        assert engines <= set(compose_services[name]["depends_on"]), name
    assert "mailpit" in compose_services["worker-deliver"]["depends_on"]
    assert (
        "redis" in compose_services["beat"]["depends_on"]
        and "redis" in compose_services["flower"]["depends_on"]
    )
    for name in APP:  # with the `rabbitmq` profile every Celery process waits for the broker
        assert "rabbitmq" in compose_services[name]["depends_on"], name


def test_named_volumes_are_declared_and_used(
    compose: dict[str, Any], compose_services: dict[str, Any]
) -> None:
    declared = set(compose["volumes"])
    used = set()
    for name, service in compose_services.items():
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0]
            assert not source.startswith((".", "/")), f"{name}: bind mount {mount}; use a named volume"
            used.add(source)
    assert used == declared
    for engine, path in [
        ("redis", "/data"),
        ("postgres", "/var/lib/postgresql/data"),
        ("elasticsearch", "/usr/share/elasticsearch/data"),
        ("weaviate", "/var/lib/weaviate"),
    ]:
        assert any(m.endswith(":" + path) for m in compose_services[engine]["volumes"]), engine


def test_redis_persists_with_an_append_only_file(compose_services: dict[str, Any]) -> None:
    command = compose_services["redis"]["command"]
    assert option(command, "--appendonly") == "yes"


def test_published_ports_stay_on_loopback(compose_services: dict[str, Any]) -> None:
    for name, service in compose_services.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"


def test_one_image_runs_every_app_process(compose_services: dict[str, Any]) -> None:
    assert {compose_services[name]["image"] for name in APP} == {"sleuth:local"}
    assert all(compose_services[name]["build"]["context"] == "." for name in APP)
    commands = {name: compose_services[name]["command"][0] for name in APP}
    assert commands == {"api": "api", "beat": "beat", "flower": "flower",
                        **{name: "worker" for name in WORKER_GROUPS}}


def test_worker_groups_cover_every_queue_once(compose_services: dict[str, Any]) -> None:
    seen: list[str] = []
    for name, queues in WORKER_GROUPS.items():
        command = compose_services[name]["command"]
        assert set(option(command, "-Q").split(",")) == queues, name
        seen += option(command, "-Q").split(",")
        # The health check pings exactly this worker's node: the name in its command.
        check = compose_services[name]["healthcheck"]["test"]
        assert "control.ping" in check[3] and check[4] == option(command, "--name"), name
    assert sorted(seen) == sorted(ALL_QUEUES)


def test_api_listens_where_it_is_published_and_checks_readiness(compose_services: dict[str, Any]) -> None:
    api = compose_services["api"]
    assert option(api["command"], "--host") == "0.0.0.0"
    port = option(api["command"], "--port")
    assert api["ports"] == [f"127.0.0.1:{port}:{port}"]
    assert f":{port}/readyz" in " ".join(api["healthcheck"]["test"])


def test_flower_has_basic_auth_and_beat_is_single(compose_services: dict[str, Any]) -> None:
    flower = compose_services["flower"]
    assert ":" in interpolate(flower["environment"]["FLOWER_BASIC_AUTH"])
    assert "/healthcheck" in " ".join(flower["healthcheck"]["test"])  # Flower's unauthenticated probe
    assert compose_services["beat"].get("deploy", {}).get("replicas", 1) == 1


def test_every_app_variable_is_a_setting(compose_services: dict[str, Any]) -> None:
    known = set(env_to_field()) | set(EXTERNAL)
    for name in APP:
        unknown = sorted(set(compose_services[name]["environment"]) - known)
        assert not unknown, f"{name} sets variables Settings does not read: {unknown}"


def test_the_environment_configures_the_production_engines(compose_services: dict[str, Any]) -> None:
    env = app_env(compose_services["api"])
    settings = settings_from_env(env)
    assert (settings.engines.lexical_backend, settings.engines.vector_backend) == (
        "elasticsearch",
        "weaviate",
    )
    assert settings.database_url and settings.database_url.startswith("postgresql+psycopg://")
    assert settings.redis_url and urlsplit(settings.redis_url).hostname == "redis"
    assert (
        settings.engines.elasticsearch_url
        and urlsplit(settings.engines.elasticsearch_url).hostname == "elasticsearch"
    )
    assert settings.engines.weaviate_url and urlsplit(settings.engines.weaviate_url).hostname == "weaviate"
    assert settings.engines.elasticsearch_replicas == 0  # a single node could never allocate a replica
    assert settings.home == Path("/var/lib/sleuth")
    for name in APP:  # every process sees the same configuration
        assert {k: v for k, v in app_env(compose_services[name]).items() if k not in EXTERNAL} == env, name


def test_credentials_match_the_engines(compose_services: dict[str, Any]) -> None:
    env = app_env(compose_services["api"])
    settings = settings_from_env(env)
    es = {k: interpolate(str(v)) for k, v in compose_services["elasticsearch"]["environment"].items()}
    assert es["xpack.security.enabled"] == "true" and es["discovery.type"] == "single-node"
    assert settings.engines.elasticsearch_username == "elastic"
    assert (
        settings.engines.elasticsearch_password
        and settings.engines.elasticsearch_password.get_secret_value() == (es["ELASTIC_PASSWORD"])
    )
    weaviate = {k: interpolate(str(v)) for k, v in compose_services["weaviate"]["environment"].items()}
    assert weaviate["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "false"
    assert settings.engines.weaviate_api_key and settings.engines.weaviate_api_key.get_secret_value() in (
        weaviate["AUTHENTICATION_APIKEY_ALLOWED_KEYS"].split(","))
    assert weaviate["DEFAULT_VECTORIZER_MODULE"] == "none"  # vectors come from Sleuth's embedder
    assert any(
        p.endswith(f":{settings.engines.weaviate_grpc_port}") for p in compose_services["weaviate"]["ports"]
    )
    postgres = {k: interpolate(str(v)) for k, v in compose_services["postgres"]["environment"].items()}
    db = urlsplit(settings.database_url or "")
    assert (db.username, db.password, db.hostname, db.path.lstrip("/")) == (
        postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"], "postgres", postgres["POSTGRES_DB"])


def _compose_mail_recipe() -> list[list[str]]:
    """The `docker compose exec api sleuth …` commands of docs/helpdesks.md's mail-catcher recipe, as argv."""
    text = (ROOT / "docs" / "helpdesks.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    recipe = [b for b in blocks if "--host mailpit" in b]
    assert len(recipe) == 1, "docs/helpdesks.md shows one SMTP channel for the compose mail catcher"
    commands = recipe[0].replace("\\\n", " ").strip().splitlines()
    argvs = [shlex.split(c) for c in commands]
    assert all(a[:4] == ["docker", "compose", "exec", "api"] and a[4] == "sleuth" for a in argvs), commands
    return [a[5:] for a in argvs]


def test_the_documented_mail_channel_reaches_the_catcher(compose_services: dict[str, Any]) -> None:
    """E-mail is a tenant's SMTP channel (not a setting): the compose recipe in docs/helpdesks.md points one
    at mailpit's SMTP port inside the network, is valid as the CLI/API would parse it, and allowlists mailpit,
    whose private compose address the outbound guard would otherwise refuse at send time."""
    recipe = _compose_mail_recipe()
    allow = next(a for a in recipe if a[:2] == ["tenants", "update"])
    add = next(a for a in recipe if a[:2] == ["channels", "add"])
    assert option(allow, "--allow-host") == "mailpit"
    assert allow[2] == option(add, "--tenant")
    spec = parse_channel({"name": add[2], "type": option(add, "--type"), "host": option(add, "--host"),
                          "port": int(option(add, "--port")), "from": option(add, "--from")})
    assert isinstance(spec, SmtpSpec) and (spec.host, spec.port) == ("mailpit", 1025)
    assert not spec.starttls and not spec.ssl  # mailpit speaks plain SMTP on 1025
    mailpit = compose_services["mailpit"]
    # the deliver queue's workers reach it
    assert "mailpit" in compose_services["worker-deliver"]["depends_on"]
    # not published
    assert not any(str(p).split(":")[-1].startswith("1025") for p in mailpit.get("ports", []))
    assert any(str(p).endswith(":8025") for p in mailpit["ports"])  # its web UI is

    def compose_dns(_host: str, _port: int) -> list[str]:
        return ["172.18.0.5"]  # a compose network address: private

    allowed = OutboundGuard.for_hosts([option(allow, "--allow-host")], resolver=compose_dns)
    assert allowed.pin(spec.host, spec.port) == "172.18.0.5"
    with pytest.raises(OutboundRefused, match="mailpit"):
        OutboundGuard.for_hosts([], resolver=compose_dns).pin(spec.host, spec.port)


def test_compose_itself_accepts_the_file() -> None:
    """`docker compose config` when a Compose v2 binary is installed (not needed for the checks above)."""
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("no docker-compose binary on this machine")
    result = subprocess.run([binary, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr


def test_the_rabbitmq_profile_is_the_documented_broker(compose_services: dict[str, Any]) -> None:
    """By default Celery's broker is the Redis URL (SLEUTH_BROKER_URL empty); the broker URL that
    docs/production.md tells to put in .env with the `rabbitmq` profile reaches the rabbitmq service with its
    user, password and vhost, and RabbitMQ keeps its queues on a volume."""
    assert not settings_from_env(app_env(compose_services["api"])).broker_url
    text = (ROOT / "docs" / "production.md").read_text()
    assert "COMPOSE_PROFILES=rabbitmq" in text
    (documented,) = set(re.findall(r"SLEUTH_BROKER_URL=(amqp://[^\s`]+)", text))
    rabbit = {k: interpolate(str(v)) for k, v in compose_services["rabbitmq"]["environment"].items()}
    url = urlsplit(documented.replace("${RABBITMQ_PASSWORD}", rabbit["RABBITMQ_DEFAULT_PASS"]))
    assert (url.username, url.password, url.hostname, url.port, url.path.lstrip("/")) == (
        rabbit["RABBITMQ_DEFAULT_USER"], rabbit["RABBITMQ_DEFAULT_PASS"], "rabbitmq", 5672,
        rabbit["RABBITMQ_DEFAULT_VHOST"])
    assert any(m.endswith(":/var/lib/rabbitmq") for m in compose_services["rabbitmq"]["volumes"])
    assert "SLEUTH_BROKER_URL" in compose_services["api"]["environment"]
