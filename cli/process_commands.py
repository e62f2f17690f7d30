"""The commands that run Sleuth's processes: `up` (all of them, supervised), `api`, `worker`, `beat`,
`flower`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from config.settings import Settings, get_settings
from investigation.errors import ValidationFailed
from workers.names import ALL_QUEUES

console = Console(stderr=True, soft_wrap=True)  # piped output: no wrapping mid-phrase


def _settings() -> Settings:
    return get_settings()


def up(port: Annotated[int | None, typer.Option(help="API port (default: SLEUTH_API_PORT)")] = None,
       host: Annotated[str | None, typer.Option(help="API address (default: SLEUTH_API_HOST)")] = None,
       workers: Annotated[int, typer.Option(help="Worker processes")] = 1,
       concurrency: Annotated[int | None, typer.Option(
           help="Pool processes per worker (default: SLEUTH_WORKER_CONCURRENCY)")] = None) -> None:
    """Embedded Redis (unless SLEUTH_REDIS_URL), the API, one beat and workers, supervised (a dead child is
    restarted with backoff); Ctrl-C stops all."""
    from cli.up import run_up

    settings = _settings()
    run_up(settings, host=host or settings.api_host, port=port or settings.api_port, workers=workers,
           concurrency=concurrency or settings.workers.worker_concurrency, console=console)


def api(host: Annotated[str | None, typer.Option(help="default: SLEUTH_API_HOST")] = None,
        port: Annotated[int | None, typer.Option(help="default: SLEUTH_API_PORT")] = None) -> None:
    """Run only the HTTP API (uvicorn)."""
    import uvicorn

    from api.app import create_app
    from api.log_redaction import install as redact_logs
    from cli.processes import refuse_unsafe_production
    from observability import logs

    refuse_unsafe_production(_settings())
    logs.configure(_settings())
    redact_logs()  # the access log prints full paths (?key=...): masked before any handler formats them
    # log_config=None: uvicorn's loggers go through Sleuth's handler (JSON or text, like every process).
    # The app knows the address it is bound to: /metrics is open without its token on loopback only.
    settings = _settings().model_copy(update={"api_host": host} if host else {})
    uvicorn.run(create_app(settings), host=settings.api_host, port=port or settings.api_port,
                log_config=None)


def _quiet_when_json() -> list[str]:
    """Celery's banner is for people: with JSON logs (production), only JSON lines reach the log."""
    from observability import logs

    return ["--quiet"] if logs.use_json(_settings(), sys.stderr) else []


def _beat_schedule_file(settings: Settings) -> Path:
    run = settings.home.resolve() / "run"
    run.mkdir(parents=True, exist_ok=True)
    return run / "beat-schedule"


def worker(queues: Annotated[str, typer.Option("-Q", "--queues")] = ",".join(ALL_QUEUES),
           concurrency: Annotated[int | None, typer.Option(
               help="Pool processes (default: SLEUTH_WORKER_CONCURRENCY)")] = None,
           name: str = "sleuth", beat: bool = False,
           loglevel: str = "INFO") -> None:
    """Run one Celery worker on the given queues (optionally with the beat watchdog embedded)."""
    from cli.processes import refuse_unsafe_production
    from workers.app import create_celery
    from workers.broker import check_broker
    from workers.publishing import ride_out_broker_restarts

    refuse_unsafe_production(_settings())
    check_broker(_settings())
    celery_app = create_celery(_settings())
    ride_out_broker_restarts(celery_app)
    argv = [
        "worker",
        "-Q",
        queues,
        "--concurrency",
        str(concurrency or _settings().workers.worker_concurrency),
        "-n",
        f"{name}@%h",
        f"--loglevel={loglevel}",
        "-E",
    ]
    if beat:
        argv += ["-B", "-s", str(_beat_schedule_file(_settings()))]
    celery_app.worker_main(_quiet_when_json() + argv)


def beat(loglevel: str = "INFO") -> None:
    """Run Celery beat alone (the watchdog schedule) — one per deployment."""
    from workers.app import create_celery

    create_celery(_settings()).start([*_quiet_when_json(), "beat", f"--loglevel={loglevel}", "-s",
                                      str(_beat_schedule_file(_settings()))])


def flower(
    port: int = 5555,
    address: Annotated[str, typer.Option(help="Interface to listen on")] = "127.0.0.1",
    basic_auth: Annotated[str | None, typer.Option(help="user:password")] = None,
) -> None:
    """Flower on the configured broker, or on the running `sleuth up` of this SLEUTH_HOME. Off loopback,
    basic auth is on: --basic-auth, SLEUTH_FLOWER_BASIC_AUTH, or a generated password printed here; on
    loopback it answers only requests addressed to 127.0.0.1, [::1] or localhost (DNS rebinding)."""
    from kombu.utils.url import maybe_sanitize_url

    from cli.flower import check_host_header, flower_argv, is_loopback
    from cli.processes import existing_redis
    from workers.app import create_celery
    from workers.broker import broker_url

    settings = existing_redis(_settings())
    if settings is None:
        raise ValidationFailed(
            "SLEUTH_REDIS_URL", "no broker: set SLEUTH_REDIS_URL or start `sleuth up` first"
        )
    argv, generated = flower_argv(settings, port=port, address=address, basic_auth=basic_auth)
    if generated:
        console.print(
            f"Flower basic auth: user [bold]{generated[0]}[/bold] password [bold]{generated[1]}[/bold]"
        )
    console.print(f"Flower on http://{address}:{port}/ (broker {maybe_sanitize_url(broker_url(settings))})")
    if is_loopback(address):
        check_host_header()
    create_celery(settings).start(argv)
