"""The stack of the partition scenario, spread over hosts made of network namespaces (`cli.chaos.netns`).

Services host = the root namespace: a redis-server of the run's own and the machine's PostgreSQL (a scratch
database) on 127.0.0.1, reached from the other hosts through forwarders on the bridge address (`DelayProxy`;
the workers' Redis forwarder is the one that can add latency), and the webhook receiver on that address.
API host: `sleuth api` and `sleuth beat`. Two worker hosts: one `sleuth worker` each. Every process shares
SLEUTH_HOME (the embedded search indexes and the secret key are files, as a shared volume would be)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from cli.chaos.delay_proxy import DelayProxy
from cli.chaos.harness import KB, Harness, Scale
from cli.chaos.netns import Topology
from cli.chaos.receiver import ChaosReceiver
from cli.chaos.redis_server import RedisServer

API_PORT = 8047
WORKERS = ("w0", "w1")


@dataclass(frozen=True)
class Plan:
    """How long each phase lasts and how many investigations it carries (in proportion to its length)."""

    n: int
    before_s: float
    cut_s: float
    after_s: float
    delayed_s: float
    visibility_timeout: int  # shorter than the cut: the cut worker's messages go back to the queue
    task_time_limit: int
    deadline_s: int
    delay_ms: tuple[float, float] = (50.0, 20.0)


PLANS = {
    # The soft time limit is 10 s under the hard one: a step held up by 50 ms per Redis round trip needs it.
    "small": Plan(
        20,
        before_s=4,
        cut_s=30,
        after_s=4,
        delayed_s=6,
        visibility_timeout=25,
        task_time_limit=22,
        deadline_s=400,
    ),
    "full": Plan(
        200,
        before_s=30,
        cut_s=60,
        after_s=30,
        delayed_s=40,
        visibility_timeout=45,
        task_time_limit=40,
        deadline_s=900,
    ),
}


@dataclass
class PartitionHarness(Harness):
    """A `Harness` whose API, beat and workers run on hosts of a `Topology` instead of under `sleuth up`."""

    topo: Topology = field(default_factory=lambda: Topology(["api", *WORKERS]))
    plan: Plan = PLANS["small"]
    redis_direct: str = ""  # the chaos process's own Redis URL (loopback)
    worker_redis: DelayProxy | None = None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    env_by_host: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://{self.topo.ip('api')}:{API_PORT}"

    def run_info(self) -> dict[str, Any]:
        return {"redis_url": self.redis_direct}

    def prepare(self) -> None:
        """One tenant (`big`) with the example KB, callbacks allowed to the services host's receiver."""
        from adapters.search.ingest import ingest, load_documents
        from bootstrap import Services
        from cli.chaos.harness import Tenant
        from storage import repositories as repo

        services = Services(self.settings())
        with services.session() as session:
            tenant, key = repo.create_tenant(
                session,
                name="big",
                box=services.secret_box(),
                allowed_hosts=[self.topo.services_ip],
                limits={"intake_per_minute": 0},
            )
            self.tenants["big"] = Tenant("big", tenant.id, key)
        ingest(load_documents([KB]), tenant=tenant.id, backends=list(services.backends.values()))
        services.engine.dispose()

    def _spawn(self, name: str, host: str, command: list[str]) -> None:
        log = open(self.work / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(
            self.topo.argv(host, [sys.executable, "-m", "cli.main", *command]),
            env=self.env_by_host[host],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        log.close()

    def start(self, timeout: float = 240.0) -> None:
        self._spawn("api", "api", ["api", "--host", "0.0.0.0", "--port", str(API_PORT)])
        self._spawn("beat", "api", ["beat"])
        for i, host in enumerate(WORKERS):
            self._spawn(host, host, ["worker", "--name", f"sleuth{i}", "--concurrency", "2"])
        self.log_path = self.work / "api.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [name for name, proc in self.procs.items() if proc.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited: see {self.work}/<name>.log")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=5).status_code == 200 and len(self.nodes()) >= 2:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the partition stack was not ready within {timeout:.0f}s: see {self.work}")

    def nodes(self, timeout: float = 1.0) -> list[str]:
        """Names of the workers that answer a ping now."""
        from workers.app import create_celery

        app = create_celery(self.settings(redis_url=self.redis_direct))
        try:
            return [name for reply in app.control.ping(timeout=timeout) or [] for name in reply]
        finally:
            app.close()

    def workers_ready(self) -> bool:
        return len(self.nodes()) >= len(WORKERS)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, proc in self.procs.items():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
            self.procs[name] = proc
        self.receiver.close()


def _stack_env(h: PartitionHarness, *, database_url: str, redis_url: str) -> dict[str, str]:
    plan = h.plan
    return {**h.env(), "SLEUTH_DATABASE_URL": database_url, "SLEUTH_REDIS_URL": redis_url,
            "SLEUTH_VISIBILITY_TIMEOUT": str(plan.visibility_timeout),
            "SLEUTH_TASK_TIME_LIMIT": str(plan.task_time_limit),
            "SLEUTH_DEADLINE_SECONDS": str(plan.deadline_s),
            "SLEUTH_TENANT_MAX_IN_FLIGHT": "8", "SLEUTH_LOG_FORMAT": "json"}


class _Stopped(Exception):
    """SIGTERM/SIGHUP while the topology exists: unwinds through the clean-up."""


def _raise_stopped(signum: int, _: FrameType | None) -> None:
    raise _Stopped(f"signal {signum}")


@contextmanager
def partition_stack(scale: Scale, admin_url: str) -> Iterator[PartitionHarness]:
    """The topology, its services and a scratch database; everything removed on the way out, whatever
    happened (a SIGTERM or SIGHUP included)."""
    from sqlalchemy import create_engine, make_url, text

    previous = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGHUP)}
    admin = make_url(admin_url)
    db_name = f"sleuth_partition_{uuid.uuid4().hex[:10]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    topo = Topology(["api", *WORKERS])
    proxies: list[DelayProxy] = []
    h: PartitionHarness | None = None
    redis_server: RedisServer | None = None
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{db_name}"'))
        topo.create()
        receiver = ChaosReceiver(host=topo.services_ip)
        h = PartitionHarness(scale, topo=topo, plan=PLANS[scale.name], receiver=receiver)
        redis_server = RedisServer(h.work / "redis")
        redis_server.start()
        for target in ((admin.host or "127.0.0.1", admin.port or 5432), ("127.0.0.1", redis_server.port),
                       ("127.0.0.1", redis_server.port)):
            proxies.append(DelayProxy(topo.services_ip, target))
        pg, redis_api, redis_workers = proxies
        h.worker_redis = redis_workers
        h.redis_direct = redis_server.url
        h.database_url = admin.set(host=topo.services_ip, port=pg.port, database=db_name).render_as_string(
            hide_password=False)
        for host in ("api", *WORKERS):
            proxy = redis_api if host == "api" else redis_workers
            h.env_by_host[host] = _stack_env(h, database_url=h.database_url,
                                             redis_url=f"redis://{topo.services_ip}:{proxy.port}/0")
        yield h
    finally:
        if h is not None:
            h.stop()
        topo.destroy()
        for proxy in proxies:
            proxy.close()
        if redis_server is not None:
            redis_server.stop()
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)'))
        engine.dispose()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
