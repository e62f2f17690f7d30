"""The stack under test: a real `sleuth up` subprocess on a fresh SLEUTH_HOME, two tenants with the
example knowledge base, an HTTP client that behaves (honours 429 Retry-After), and probes (run file,
queue depths)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import httpx

from cli.chaos.receiver import ChaosReceiver

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"
TERMINAL = ("answered", "refused", "failed")


@dataclass(frozen=True)
class Scale:
    """How big each scenario is. `small` runs in the test suite; `full` is the issue's promise."""

    name: str
    workers: int
    kill_n: int
    kill_rounds: int
    redis_n: int
    webhook_n: int
    webhook_down_s: float
    burst_big: int
    burst_small: int
    st_examples: int
    st_phases: str
    db_n: int
    db_down_s: float
    storm_n: int


SCALES = {
    "small": Scale(
        "small",
        workers=1,
        kill_n=4,
        kill_rounds=2,
        redis_n=3,
        webhook_n=3,
        webhook_down_s=4.0,
        burst_big=12,
        burst_small=3,
        st_examples=2,
        st_phases="fuzzing",
        db_n=3,
        db_down_s=8.0,
        storm_n=3,
    ),
    "full": Scale(
        "full",
        workers=2,
        kill_n=200,
        kill_rounds=8,
        redis_n=40,
        webhook_n=20,
        webhook_down_s=300.0,
        burst_big=480,
        burst_small=20,
        st_examples=20,
        st_phases="coverage,fuzzing,stateful",
        db_n=20,
        db_down_s=30.0,
        storm_n=20,
    ),
}

# Settings of the stack under test (shown in the report): recovery knobs tightened so a small run is short.
STACK_ENV = {
    "SLEUTH_WATCHDOG_INTERVAL": "2",
    "SLEUTH_REDRIVE_IDLE_SECONDS": "6",
    "SLEUTH_WEBHOOK_BACKOFF_BASE": "0.5",
    "SLEUTH_WEBHOOK_BACKOFF_MAX": "5",
    "SLEUTH_WEBHOOK_MAX_ATTEMPTS": "20",
    "SLEUTH_DEADLINE_SECONDS": "120",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Tenant:
    name: str
    id: str
    key: str


@dataclass
class Harness:
    scale: Scale
    # The stack's working folder (its home, `up.log`, an external Redis's data, scenario files): a new
    # temporary one, removed by `discard` when the stack's scenarios passed, kept for its logs when not.
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sleuth-chaos-")))
    port: int = field(default_factory=free_port)
    tenants: dict[str, Tenant] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    receiver: ChaosReceiver = field(default_factory=ChaosReceiver)
    log_path: Path | None = None
    database_url: str | None = None  # default: SQLite in the home
    extra_env: dict[str, str] = field(default_factory=dict)  # a scenario's own stack settings
    proxy: Any = None  # a `TcpProxy` in front of the database, when the scenario takes it down
    redis_server: Any = None  # a `RedisServer` given as SLEUTH_REDIS_URL, when the scenario restarts it

    @property
    def home(self) -> Path:
        return self.work / "home"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        env.update(STACK_ENV)
        env.update(self.extra_env)
        env["SLEUTH_HOME"] = str(self.home)
        if self.database_url:
            env["SLEUTH_DATABASE_URL"] = self.database_url
        return env

    def settings(self, **overrides: Any) -> Any:
        """Settings of this stack for code run in the chaos process (prepare, probes)."""
        from config.settings import Settings

        return Settings(home=self.home, database_url=self.database_url, **overrides)

    # -- lifecycle ----------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Two tenants (`big`, `small`) with the example KB, loopback callbacks allowed."""
        from adapters.search.ingest import ingest, load_documents
        from bootstrap import Services
        from storage import repositories as repo

        services = Services(self.settings())
        docs = load_documents([KB])
        for name in ("big", "small"):
            with services.session() as session:
                # Intake rate limits are proven by the test suite; here the burst must get in to measure
                # fairness.
                tenant, key = repo.create_tenant(
                    session,
                    name=name,
                    box=services.secret_box(),
                    allowed_hosts=["127.0.0.1"],
                    limits={"intake_per_minute": 0},
                )
                self.tenants[name] = Tenant(name, tenant.id, key)
            ingest(docs, tenant=self.tenants[name].id, backends=list(services.backends.values()))
        services.engine.dispose()

    def start(self, timeout: float = 180.0) -> None:
        self.log_path = self.work / "up.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cli.main", "up", "--port", str(self.port), "--workers",
                 str(self.scale.workers), "--concurrency", "2"],
                env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sleuth up exited: see {self.log_path}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=5).status_code == 200 and self.workers_ready():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"sleuth up was not ready within {timeout:.0f}s: see {self.log_path}")

    def workers_ready(self) -> bool:
        from bootstrap import Services  # noqa: F401  (keeps the import graph of the CLI)
        from workers.app import create_celery

        info = self.run_info()
        if not info:
            return False
        app = create_celery(self.settings(redis_url=str(info["redis_url"])))
        try:
            return len(app.control.ping(timeout=1.0) or []) >= self.scale.workers
        finally:
            app.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.receiver.close()

    def discard(self) -> None:
        """Remove the working folder (after `stop`; `sleuth chaos` does it when the stack's scenarios
        passed)."""
        shutil.rmtree(self.work, ignore_errors=True)

    # -- probes -------------------------------------------------------------------------------------

    def run_info(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.home / "run" / "up.json").read_text()))
        except (OSError, ValueError):
            return {}

    def child_pid(self, name: str) -> int | None:
        child = self.run_info().get("children", {}).get(name) or {}
        return child.get("pid")

    def redis(self) -> Any:
        from storage.redis_state import client_from_url

        return client_from_url(str(self.run_info()["redis_url"]), socket_timeout=2)

    def queue_depths(self) -> dict[str, int]:
        from workers.names import ALL_QUEUES, queue_keys

        client = self.redis()
        try:  # every priority's list of each queue
            return {q: sum(int(client.llen(f"sleuth:celery:{k}")) for k in queue_keys(q)) for q in ALL_QUEUES}
        finally:
            client.close()

    # -- the API as a polite client -----------------------------------------------------------------

    def submit(
        self,
        tenant: str,
        question: str,
        *,
        callback: bool = False,
        client: httpx.Client | None = None,
        timeout: float = 120.0,
    ) -> str:
        body: dict[str, Any] = {"question": question}
        if callback:
            body["callback"] = {"type": "webhook", "url": self.receiver.url}
        headers = {"Authorization": f"Bearer {self.tenants[tenant].key}"}
        deadline = time.monotonic() + timeout
        own = client is None
        http = client or httpx.Client(timeout=30)
        try:
            while True:
                try:
                    response = http.post(f"{self.base}/v1/investigations", json=body, headers=headers)
                except httpx.HTTPError:
                    response = None
                if response is not None and response.status_code in (200, 202):
                    return str(response.json()["id"])
                if time.monotonic() > deadline:
                    raise RuntimeError(f"intake refused: {response.status_code if response else 'no answer'}")
                wait = float(response.headers.get("retry-after", 1)) if response is not None else 1.0
                time.sleep(min(wait, 5.0))
        finally:
            if own:
                http.close()

    def view(self, tenant: str, inv_id: str, client: httpx.Client | None = None) -> dict[str, Any] | None:
        headers = {"Authorization": f"Bearer {self.tenants[tenant].key}"}
        try:
            response = (client or httpx).get(f"{self.base}/v1/investigations/{inv_id}", headers=headers,
                                             timeout=30)
        except httpx.HTTPError:
            return None
        return dict(response.json()) if response.status_code == 200 else None

    def wait_all(self, tenant: str, ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
        """Views of `ids` once terminal (those still not terminal at `timeout` are missing)."""
        done: dict[str, dict[str, Any]] = {}
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=30) as client:
            while len(done) < len(ids) and time.monotonic() < deadline:
                for inv_id in ids:
                    if inv_id in done:
                        continue
                    view = self.view(tenant, inv_id, client)
                    if view is not None and view["status"] in TERMINAL:
                        done[inv_id] = view
                time.sleep(0.5)
        return done

    def wait_deliveries(self, ids: set[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not ids <= set(self.receiver.accepted()):
            time.sleep(0.3)


class DepthSampler:
    """Samples the queue depths every `interval` seconds in a thread (for the report's chart)."""

    def __init__(self, harness: Harness, interval: float = 0.5) -> None:
        self.harness, self.interval = harness, interval
        self.samples: list[tuple[float, int]] = []
        self.held: list[tuple[float, str, int]] = []  # (t, tenant, investigations held back by fairness)
        self.parked: list[tuple[float, str, int]] = []  # (t, tenant, steps parked by the running-step cap)
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                t = round(time.monotonic() - self._t0, 2)
                self.samples.append((t, sum(self.harness.queue_depths().values())))
                client = self.harness.redis()
                try:
                    for name, tenant in self.harness.tenants.items():
                        self.held.append((t, name, int(client.llen(f"sleuth:fair:held:{tenant.id}"))))
                        self.parked.append((t, name, int(client.llen(f"sleuth:fair:parked:{tenant.id}"))))
                finally:
                    client.close()
            except Exception as exc:  # noqa: BLE001 - Redis may be down in a scenario: no sample then
                self.errors.append(repr(exc))
            self._stop.wait(self.interval)
