"""The measured stack: a redis-server of its own, a scratch PostgreSQL database, one tenant with the example
KB, `sleuth api` and one `sleuth worker` (one pool process, so CPU is per task) started with the counters of
`cli.capacity.probe` loaded, and a webhook receiver for the callbacks."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from cli.chaos.harness import KB, STACK_ENV, Harness, Tenant, free_port
from cli.chaos.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class MeasuredStack(Harness):
    """A `Harness` whose API and worker run as probed processes on a dedicated Redis and PostgreSQL."""

    redis_server: Any = None
    probe_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sleuth-probe-")))
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    llm_env: dict[str, str] = field(default_factory=dict)

    def run_info(self) -> dict[str, Any]:
        return {"redis_url": self.redis_server.url}

    def prepare(self) -> None:
        from adapters.search.ingest import ingest, load_documents
        from bootstrap import Services
        from storage import repositories as repo

        services = Services(self.settings(redis_url=self.redis_server.url))
        with services.session() as session:
            tenant, key = repo.create_tenant(session, name="big", box=services.secret_box(),
                                             allowed_hosts=["127.0.0.1"], limits={"intake_per_minute": 0})
            self.tenants["big"] = Tenant("big", tenant.id, key)
        ingest(load_documents([KB]), tenant=tenant.id, backends=list(services.backends.values()))
        services.engine.dispose()

    def _env(self) -> dict[str, str]:
        env = self.env()
        env.update({"SLEUTH_REDIS_URL": self.redis_server.url, "SLEUTH_LOG_FORMAT": "json",
                    "SLEUTH_TENANT_MAX_IN_FLIGHT": "0", **self.llm_env})
        return env

    def _spawn(self, name: str, process: str, argv: list[str]) -> None:
        code = (f"import sys; from cli.capacity import probe; probe.install({str(self.probe_dir)!r}, "
                f"process={process!r}); sys.argv = ['sleuth', *{argv!r}]; from cli.main import main; main()")
        with open(self.work / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen([sys.executable, "-c", code], env=self._env(), stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)

    def start(self, timeout: float = 240.0) -> None:
        self.port = free_port()
        self._spawn("api", "api", ["api", "--port", str(self.port)])
        self._spawn("worker", "worker", ["worker", "--concurrency", "1", "--name", "capacity"])
        self.log_path = self.work / "api.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited: see {self.work}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=5).status_code == 200 and self.workers_ready():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the measured stack was not ready within {timeout:.0f}s: see {self.work}")

    def workers_ready(self) -> bool:
        from workers.app import create_celery

        app = create_celery(self.settings(redis_url=self.redis_server.url))
        try:
            return len(app.control.ping(timeout=1.0) or []) >= 1
        finally:
            app.close()

    def cpu_seconds(self) -> dict[str, float]:
        """User + system CPU of each process and its children (the worker's pool), so far."""
        out: dict[str, float] = {}
        for name, proc in self.procs.items():
            try:
                root = psutil.Process(proc.pid)
                total = 0.0
                for p in [root, *root.children(recursive=True)]:
                    times = p.cpu_times()
                    total += times.user + times.system
                out[name] = total
            except psutil.Error:
                out[name] = 0.0
        return out

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        self.procs.clear()

    def discard(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        shutil.rmtree(self.probe_dir, ignore_errors=True)


@contextmanager
def measured_stack(admin_url: str, embeddings_env: dict[str, str] | None = None) -> Iterator[MeasuredStack]:
    """A stack on a scratch database of `admin_url`'s server and a redis-server of its own; removed after."""
    from sqlalchemy import create_engine, make_url, text

    from cli.chaos.harness import SCALES

    admin = make_url(admin_url)
    name = f"sleuth_capacity_{uuid.uuid4().hex[:10]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = admin.set(database=name).render_as_string(hide_password=False)
    h = MeasuredStack(SCALES["small"], database_url=url, extra_env=dict(embeddings_env or {}))
    h.extra_env.update({k: v for k, v in STACK_ENV.items() if k != "SLEUTH_DEADLINE_SECONDS"})
    try:
        h.redis_server = RedisServer(h.work / "redis")
        h.redis_server.start()
        yield h
    finally:
        h.stop()
        h.receiver.close()
        if h.redis_server is not None:
            h.redis_server.stop()
        h.discard()
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()
