"""`sleuth chaos --scenario broker-restart [--broker redis|rabbitmq]`: Celery's broker restarted while
investigations with webhook callbacks run through real workers, Redis staying up for state either way.

RabbitMQ: this machine's node stops and starts its application (`rabbitmqctl stop_app` / `start_app`; the
quorum queues recover from disk), the stack on a vhost of its own. Redis: a redis-server of the stack's own
(`SLEUTH_BROKER_URL`, AOF on) is shut down and started again on its port and data directory. Figures: lost,
duplicate deliveries per investigation, seconds until the broker and then the workers answer again."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote, urlsplit, urlunsplit

from cli.chaos.harness import TERMINAL, Harness, Scale
from cli.chaos.redis_server import RedisServer
from cli.chaos.result import Result, _q

BROKERS = ("redis", "rabbitmq")
DEFAULT_RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672/"


@dataclass(frozen=True)
class Plan:
    before: int  # investigations submitted before the restart
    after: int  # and after it (the API's publisher reconnects)
    down_s: float  # the broker stays stopped this long
    timeout: float  # for every investigation to become terminal


PLANS = {"small": Plan(before=6, after=2, down_s=5.0, timeout=240.0),
         "full": Plan(before=100, after=20, down_s=30.0, timeout=900.0)}


def _ctl(*args: str, timeout: float = 120.0) -> None:
    subprocess.run(["rabbitmqctl", "--quiet", *args], check=True, capture_output=True, timeout=timeout)


def _amqp_answers(url: str) -> bool:
    from amqp.exceptions import AMQPError
    from kombu.connection import Connection
    from kombu.exceptions import OperationalError

    try:
        with Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=0, timeout=2)
        return True
    except (OperationalError, AMQPError, OSError):
        return False


class RabbitNode:
    """This machine's RabbitMQ node (rabbitmqctl talks to it) and a vhost of the stack's own on it."""

    kind = "rabbitmq"

    def __init__(self, server_url: str) -> None:
        parts = urlsplit(server_url)
        self.vhost = f"sleuth-chaos-{uuid.uuid4().hex[:10]}"
        self.user = parts.username or "guest"
        self.url = urlunsplit((parts.scheme, parts.netloc, "/" + quote(self.vhost, safe=""), "", ""))

    def create(self) -> None:
        _ctl("add_vhost", self.vhost)
        _ctl("set_permissions", "-p", self.vhost, self.user, ".*", ".*", ".*")

    def delete(self) -> None:
        self.start()  # never leave the node stopped, whatever happened
        _ctl("delete_vhost", self.vhost)

    def stop(self) -> None:
        _ctl("stop_app")

    def start(self) -> None:
        """Start the application (a no-op when it runs) and wait until it has booted."""
        _ctl("start_app")
        _ctl("await_startup")

    def answers(self) -> bool:
        return _amqp_answers(self.url)


class RedisBroker:
    """A redis-server of the stack's own used as the broker only (state stays on the stack's Redis)."""

    kind = "redis"

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.url = server.url

    def stop(self) -> None:
        self.server.stop()  # SIGTERM: Redis writes its AOF out and exits, as a service restart does

    def start(self) -> None:
        self.server.start()

    def answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.server.port, socket_timeout=1).ping())
        except (redis.RedisError, OSError):
            return False


@dataclass
class BrokerHarness(Harness):
    """A stack whose Celery runs on `broker` (its probes ping the workers over it too)."""

    broker: Any = None  # RabbitNode | RedisBroker

    def settings(self, **overrides: Any) -> Any:
        return super().settings(**{"broker_url": self.broker.url, **overrides})


def not_available(broker: str, server_url: str) -> str | None:
    """Why the scenario cannot run here on `broker`, or None."""
    if broker not in BROKERS:
        return f"unknown broker {broker!r} (one of {', '.join(BROKERS)})"
    if broker == "rabbitmq":
        if shutil.which("rabbitmqctl") is None:
            return "rabbitmqctl is not on PATH (the restart is made with it, on this machine's node)"
        if not _amqp_answers(server_url):
            where = urlsplit(server_url)
            return f"RabbitMQ does not answer at {where.hostname}:{where.port or 5672}"
    return None


@contextmanager
def broker_stack(scale: Scale, broker: str, server_url: str = DEFAULT_RABBITMQ_URL) -> Iterator[Harness]:
    """A stack on `broker`: a vhost of its own on the node (deleted after, the node started again whatever
    happened), or a redis-server of its own given as SLEUTH_BROKER_URL."""
    h = BrokerHarness(scale)
    node: RabbitNode | None = None
    server: RedisServer | None = None
    if broker == "rabbitmq":
        node = RabbitNode(server_url)
        node.create()
        h.broker = node
    else:
        server = RedisServer(h.work / "broker-redis")
        server.start()
        h.broker = RedisBroker(server)
    h.extra_env["SLEUTH_BROKER_URL"] = h.broker.url
    h.extra_env["SLEUTH_DEBUG_RETRIEVE_DELAY_MS"] = "400"  # investigations are mid-run when the broker stops
    try:
        yield h
    finally:
        h.stop()
        if node is not None:
            node.delete()
        if server is not None:
            server.stop()


def _seconds_until(check: Callable[[], bool], since: float, timeout: float) -> float | None:
    """Seconds from `since` until `check` holds (a check that raises, e.g. over a connection the restart
    closed, does not hold yet), or None after `timeout`."""
    while time.monotonic() - since < timeout:
        try:
            if check():
                return round(time.monotonic() - since, 1)
        except Exception:  # noqa: BLE001, S110 - asked again
            pass
        time.sleep(0.2)
    return None


def _statuses(h: Harness, ids: list[str]) -> list[str]:
    return [str(v["status"]) if (v := h.view("big", i)) is not None else "?" for i in ids]


def broker_restart(h: Harness) -> Result:
    """Investigations in flight while the broker stops for `down_s` and starts again, more submitted after:
    every one terminal and delivered, none delivered twice."""
    broker = cast(BrokerHarness, h).broker
    name = f"broker-restart-{broker.kind}"
    plan = PLANS[h.scale.name]
    ids = [h.submit("big", _q(800 + i), callback=True) for i in range(plan.before)]
    started = time.monotonic()
    while "running" not in _statuses(h, ids) and time.monotonic() - started < 60:
        time.sleep(0.2)
    at_stop = _statuses(h, ids)
    stopped = time.monotonic()
    try:
        broker.stop()
        time.sleep(plan.down_s)
    finally:
        broker.start()
    back = _seconds_until(broker.answers, stopped, 120)
    restarted = time.monotonic()
    workers = _seconds_until(h.workers_ready, restarted, 180)
    ids += [h.submit("big", _q(900 + i), callback=True) for i in range(plan.after)]
    done = h.wait_all("big", ids, timeout=plan.timeout)
    finished = round(time.monotonic() - restarted, 1)
    mine = {d["id"] for v in done.values() for d in v.get("deliveries", [])}
    h.wait_deliveries(mine, timeout=120)
    time.sleep(2.0)  # a duplicate would arrive now
    per_investigation = h.receiver.investigations
    delivered = sum(1 for i in ids if per_investigation.get(i))
    duplicates = sum(1 for i in ids if per_investigation.get(i, 0) > 1)
    failed = [v for v in done.values() if v["status"] == "failed"]
    figures = {
        "broker": broker.kind,
        "investigations": len(ids),
        "running at the stop": at_stop.count("running"),
        "not finished at the stop": sum(1 for s in at_stop if s not in TERMINAL),
        "broker down s": plan.down_s,
        "broker answers after s (from its stop)": back if back is not None else "never",
        "workers answer after s": workers if workers is not None else "never",
        "all terminal after s": finished,
        "terminal": len(done),
        "lost": len(ids) - len(done),
        "failed": len(failed),
        "delivered": delivered,
        "duplicate deliveries": duplicates,
    }
    # Lost 0 (terminal and delivered), duplicates 0, and none failed: a step that has to send the next one
    # while the broker is away waits for it (`workers.publishing.ride_out_broker_restarts`).
    ok = (len(done) == len(ids) and not failed and delivered == len(ids) and duplicates == 0
          and back is not None and workers is not None)
    note = "failed: " + "; ".join(f"{v['id']}: {v.get('stop_reason')} {str(v.get('error'))[:80]}"
                                  for v in failed)[:300] if failed else ""
    return Result(name, ok, figures, note=note)
