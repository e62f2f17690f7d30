"""`sleuth up`: embedded Redis (unless SLEUTH_REDIS_URL; also the broker unless SLEUTH_BROKER_URL), the API,
ONE beat and the workers, supervised.

Each is a child of `cli.supervisor.Supervisor`: a dead child is restarted with backoff; only Ctrl-C or
SIGTERM stops the stack. The run file (`SLEUTH_HOME/run/up.json`) names the children and their pids.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

from kombu.utils.url import maybe_sanitize_url
from rich.console import Console

from cli import forking, processes
from cli.supervisor import Child, RestartPolicy, Supervisor
from config.settings import Settings
from investigation.errors import ValidationFailed
from workers.broker import check_broker, is_amqp

TICK_SECONDS = 0.25


def _redis_child(settings: Settings) -> tuple[Child, str]:
    from workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(settings.home)

    def start() -> subprocess.Popen[bytes]:
        server.start()
        assert server.process is not None
        return server.process

    def stop(_: subprocess.Popen[bytes]) -> None:
        server.stop()

    return Child("redis", start, stop), server.url


def stack_children(settings: Settings, *, host: str, port: int, workers: int, concurrency: int,
                   quiet: bool = False) -> tuple[list[Child], str]:
    """The children of one stack, in start order, and the broker URL they share."""
    children: list[Child] = []
    url = settings.redis_url
    if not url:
        redis_child, url = _redis_child(settings)
        children.append(redis_child)
    env = processes.child_env(settings, url)
    children.append(Child("api", lambda: processes.spawn_api(env, host=host, port=port)))
    children.append(Child("beat", lambda: processes.spawn_beat(env, quiet=quiet)))
    for i in range(workers):
        children.append(Child(f"worker{i}", partial(processes.spawn_worker, env, concurrency=concurrency,
                                                    name=f"sleuth{i}", quiet=quiet)))
    return children, url


def _write_run_file(path: Path, info: dict[str, object], supervisor: Supervisor) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**info, "children": supervisor.status()}))
    os.replace(tmp, path)


def run_up(settings: Settings, *, host: str, port: int, workers: int, concurrency: int,
           console: Console, policy: RestartPolicy | None = None) -> None:
    processes.refuse_unsafe_production(settings)
    forking.preload()  # before any connection: the children are forked from here (cli/forking.py)
    check_broker(settings)
    if processes.running_stack(settings):
        raise ValidationFailed("SLEUTH_HOME", "a `sleuth up` already runs for this home")
    from observability import metrics

    metrics.reset_dir(settings)  # counters start from zero with the stack; children share this directory
    children, url = stack_children(settings, host=host, port=port, workers=workers, concurrency=concurrency)
    run_file = processes.run_file(settings)
    run_file.parent.mkdir(parents=True, exist_ok=True)
    info: dict[str, object] = {"pid": os.getpid(), "redis_url": url, "api_url": f"http://{host}:{port}"}
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    supervisor = Supervisor(children, policy=policy, report=lambda m: console.print(f"[yellow]{m}[/yellow]"),
                            on_change=lambda sup: _write_run_file(run_file, info, sup))
    try:
        supervisor.start()
        if settings.redis_url is None:
            console.print(f"embedded Redis on {url}")
        if is_amqp(settings):
            console.print(f"Celery's broker: RabbitMQ at {maybe_sanitize_url(str(settings.broker_url))}")
        console.print(f"[green]Sleuth is up[/green]: API http://{host}:{port} (docs at /docs), one beat, "
                      f"{workers} worker(s), supervised. Ctrl-C stops everything.")
        while not stop:
            supervisor.tick()
            time.sleep(TICK_SECONDS)
    finally:
        console.print("stopping …")
        supervisor.stop()
        run_file.unlink(missing_ok=True)
        console.print("stopped.")


__all__ = ["run_up", "stack_children"]
