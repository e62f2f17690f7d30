"""Starting and finding Sleuth's processes: embedded Redis, worker and API subprocesses, `sleuth up`'s run
file."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from amqp.exceptions import AMQPError
from kombu.exceptions import OperationalError

from cli import forking
from cli.supervisor import stop_group
from config.settings import Settings
from investigation.errors import PermanentError, ValidationFailed
from workers.embedded_redis import EmbeddedRedis
from workers.names import ALL_QUEUES

# Everything a Sleuth process creates (the SQLite database, key files, the embedded Redis's directory and
# append-only file, indexes, run files) is for the account that runs it alone: 0600 files, 0700 folders.
PRIVATE_UMASK = 0o077


def make_files_private(settings: Settings) -> None:
    """Set this process's umask (inherited by every child: workers, API, redis-server) so that what it
    creates is private, and take group/other rights off a home and top-level files made before that.
    Only what this user owns is changed: a volume's mount point belongs to root (k8s `emptyDir` with an
    fsGroup), and what is created in it is private anyway."""
    os.umask(PRIVATE_UMASK)
    home = settings.home
    if not home.is_dir():
        return
    for path in (home, *home.iterdir()):
        info = path.lstat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid() and not path.is_symlink():
            path.chmod(info.st_mode & 0o700)


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def refuse_unsafe_production(settings: Settings) -> None:
    """In production (SLEUTH_ENV=production) `up`, `api` and `worker` start only with their keys set apart
    from the data: a key beside the database it protects protects nothing from whoever copies the folder,
    and a key generated per replica cannot be read by the others (docs/production.md)."""
    if settings.env != "production":
        return
    if settings.security.secret_key is None and settings.security.secret_key_file is None:
        raise ValidationFailed("SLEUTH_SECRET_KEY", "required when SLEUTH_ENV=production (or "
                               "SLEUTH_SECRET_KEY_FILE, a file outside SLEUTH_HOME)")
    if settings.security.secret_key is None and settings.security.secret_key_file is not None \
            and _inside(settings.security.secret_key_file, settings.home):
        raise ValidationFailed(
            "SLEUTH_SECRET_KEY_FILE",
            f"{settings.security.secret_key_file} lies inside SLEUTH_HOME "
            f"({settings.home}): keep the key apart from the data it protects",
        )
    if settings.security.session_secret is None:
        raise ValidationFailed("SLEUTH_SESSION_SECRET", "required when SLEUTH_ENV=production: one value "
                               "shared by every API replica")


def run_file(settings: Settings) -> Path:
    return settings.home / "run" / "up.json"


def running_stack(settings: Settings) -> dict[str, object] | None:
    """The run file of a live `sleuth up` for this SLEUTH_HOME, if any."""
    path = run_file(settings)
    try:
        info = json.loads(path.read_text())
        os.kill(int(info["pid"]), 0)
        return dict(info)
    except (OSError, ValueError, KeyError):
        return None


def child_env(settings: Settings, redis_url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"SLEUTH_HOME": str(settings.home.resolve()), "SLEUTH_REDIS_URL": redis_url,
                "SLEUTH_REDIS_PREFIX": settings.redis_prefix})
    if settings.database_url:
        env["SLEUTH_DATABASE_URL"] = settings.database_url
    env.update(extra)
    return env


def spawn_worker(env: dict[str, str], *, queues: Sequence[str] = ALL_QUEUES, concurrency: int = 2,
                 beat: bool = False, name: str = "sleuth", quiet: bool = True) -> subprocess.Popen[bytes]:
    args = ["worker", "-Q", ",".join(queues), "--concurrency", str(concurrency), "--name", name]
    if beat:
        args.append("--beat")
    return forking.spawn(args, env, quiet=quiet)


def spawn_beat(env: dict[str, str], *, quiet: bool = True) -> subprocess.Popen[bytes]:
    """The one beat of a stack (the watchdog schedule), in its own process group."""
    return forking.spawn(["beat", "--loglevel", "WARNING"], env, quiet=quiet)


def spawn_api(env: dict[str, str], *, host: str, port: int) -> subprocess.Popen[bytes]:
    return forking.spawn(["api", "--host", host, "--port", str(port)], env, quiet=False)


def wait_for_workers(settings: Settings, redis_url: str, *, count: int = 1, timeout: float = 60.0) -> None:
    """Block until `count` workers answer a Celery ping (workers import the embedder, which takes a while)."""
    from workers.app import create_celery

    app = create_celery(settings.model_copy(update={"redis_url": redis_url}))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            replies = app.control.ping(timeout=0.5) or []
        except (AMQPError, OperationalError, OSError):  # a pooled connection the broker closed: next one
            replies = []
        if len(replies) >= count:
            return
        time.sleep(0.2)
    raise PermanentError(f"no Celery worker answered within {timeout:.0f}s")


def existing_redis(settings: Settings) -> Settings | None:
    """Settings on the configured Redis, or on a running `sleuth up`'s; None when neither exists."""
    if settings.redis_url:
        return settings
    live = running_stack(settings)
    if live:
        return settings.model_copy(update={"redis_url": str(live["redis_url"])})
    return None


@contextmanager
def queue_stack(settings: Settings, *, workers: int = 1, concurrency: int = 2,
                quiet: bool = True, env: dict[str, str] | None = None) -> Iterator[Settings]:
    """Settings pointing at a broker with live workers: the configured one, a running `sleuth up`'s,
    or an embedded Redis plus worker processes started here and stopped on exit."""
    if (existing := existing_redis(settings)) is not None:
        yield existing
        return
    redis_server = EmbeddedRedis(settings.home)
    url = redis_server.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        full_env = child_env(settings, url, **(env or {}))
        procs = [spawn_worker(full_env, concurrency=concurrency, name=f"sleuth{i}", quiet=quiet)
                 for i in range(workers)]
        wait_for_workers(settings, url, count=workers)
        yield settings.model_copy(update={"redis_url": url})
    finally:
        for proc in procs:
            stop_group(proc)
        redis_server.stop()


@contextmanager
def state_redis(settings: Settings) -> Iterator[Settings]:
    """Settings with a Redis for budgets/dedup but no workers (the inline executor)."""
    if (existing := existing_redis(settings)) is not None:
        yield existing
        return
    with EmbeddedRedis(settings.home) as redis_server:
        yield settings.model_copy(update={"redis_url": redis_server.url})
