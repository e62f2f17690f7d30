"""`sleuth` command line: tenants, ingest, ask, up, api, worker, beat, flower, bench, demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.tools import tools_app
from config.settings import Settings, get_settings
from investigation.errors import SleuthError, ValidationFailed
from workers.names import ALL_QUEUES

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
tenants_app = typer.Typer(no_args_is_help=True, help="Create and list tenants.")
app.add_typer(tenants_app, name="tenants")
app.add_typer(tools_app, name="tools")
console = Console(stderr=True, soft_wrap=True)  # piped output: no wrapping mid-phrase


def _settings() -> Settings:
    return get_settings()


@tenants_app.command("create")
def tenants_create(name: str, as_json: Annotated[bool, typer.Option("--json")] = False,
                   limit: Annotated[list[str] | None, typer.Option(
                       help="KEY=N cap, repeatable: max_hops, max_retrieval_calls, max_llm_tokens, "
                            "deadline_seconds, llm_tokens_per_day")] = None) -> None:
    """Create a tenant; prints its id, API key (shown once) and webhook signing secret."""
    from bootstrap import Services
    from storage import repositories as repo

    limits: dict[str, object] = {}
    for item in limit or []:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise ValidationFailed("limit", f"{item!r} is not KEY=N")
        limits[key.strip()] = int(value)
    services = Services(_settings())
    with services.session() as session:
        tenant, key = repo.create_tenant(session, name=name, limits=limits)
        out = {"id": tenant.id, "name": tenant.name, "api_key": key, "webhook_secret": tenant.webhook_secret}
    if as_json:
        print(json.dumps(out))
    else:
        print(f"tenant id:       {out['id']}\napi key:         {key}   (shown once; stored hashed)\n"
              f"webhook secret:  {out['webhook_secret']}")


@tenants_app.command("list")
def tenants_list() -> None:
    from bootstrap import Services
    from storage import repositories as repo

    with Services(_settings()).session() as session:
        for t in repo.list_tenants(session):
            print(f"{t.id}  {t.name}  key {t.api_key_prefix}…")


@app.command()
def ingest(paths: list[Path], tenant: Annotated[str, typer.Option(help="Tenant name")],
           as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
           force: Annotated[bool, typer.Option(help="Write every document again, changed or not")] = False) -> None:
    """Index JSONL / .md / .txt documents into both engines; unchanged documents are skipped."""
    from cli.commands import ingest_summary, run_ingest

    report = run_ingest(_settings(), paths, tenant, console=console, force=force)
    print(json.dumps(report) if as_json else ingest_summary(report))


@app.command()
def ask(question: str, tenant: Annotated[str, typer.Option(help="Tenant name")],
        as_json: Annotated[bool, typer.Option("--json")] = False,
        mode: Annotated[str, typer.Option(help="agentic | single-shot")] = "agentic",
        audience: Annotated[str, typer.Option(help="agent | customer: who reads the answer "
                                              "(internal documents never reach a customer)")] = "agent",
        executor: Annotated[str, typer.Option(
            help="auto: the queue if a broker or `sleuth up` runs, else in this process | queue | inline")]
        = "auto") -> None:
    """Answer one question with live progress and the cited answer (through the queue when one runs)."""
    from cli.commands import run_ask

    code = run_ask(_settings(), question, tenant, mode=mode, as_json=as_json, console=console,
                   audience=audience, executor=executor)
    raise typer.Exit(code)


@app.command()
def up(port: int = 8000, host: str = "127.0.0.1",
       workers: Annotated[int, typer.Option(help="Worker processes")] = 1,
       concurrency: int = 2) -> None:
    """Embedded Redis (unless SLEUTH_REDIS_URL), the API, one beat and workers, supervised (a dead child is
    restarted with backoff); Ctrl-C stops all."""
    from cli.up import run_up

    run_up(_settings(), host=host, port=port, workers=workers, concurrency=concurrency, console=console)


@app.command()
def api(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run only the HTTP API (uvicorn)."""
    import uvicorn

    from api.app import create_app
    from api.log_redaction import install as redact_logs
    from observability import logs

    logs.configure(_settings())
    redact_logs()  # the access log prints full paths (?key=...): masked before any handler formats them
    # log_config=None: uvicorn's loggers go through Sleuth's handler (JSON or text, like every process).
    uvicorn.run(create_app(_settings()), host=host, port=port, log_config=None)


def _beat_schedule_file(settings: Settings) -> Path:
    run = settings.home.resolve() / "run"
    run.mkdir(parents=True, exist_ok=True)
    return run / "beat-schedule"


@app.command()
def worker(queues: Annotated[str, typer.Option("-Q", "--queues")] = ",".join(ALL_QUEUES),
           concurrency: int = 2, name: str = "sleuth", beat: bool = False,
           loglevel: str = "INFO") -> None:
    """Run one Celery worker on the given queues (optionally with the beat watchdog embedded)."""
    from workers.app import create_celery

    celery_app = create_celery(_settings())
    argv = ["worker", "-Q", queues, "--concurrency", str(concurrency), "-n", f"{name}@%h",
            f"--loglevel={loglevel}", "-E"]
    if beat:
        argv += ["-B", "-s", str(_beat_schedule_file(_settings()))]
    celery_app.worker_main(argv)


@app.command()
def beat(loglevel: str = "INFO") -> None:
    """Run Celery beat alone (the watchdog schedule) — one per deployment."""
    from workers.app import create_celery

    create_celery(_settings()).start(["beat", f"--loglevel={loglevel}", "-s",
                                      str(_beat_schedule_file(_settings()))])


@app.command()
def flower(port: int = 5555, address: Annotated[str, typer.Option(help="Interface to listen on")] = "127.0.0.1",
           basic_auth: Annotated[str | None, typer.Option(help="user:password")] = None) -> None:
    """Flower on the configured broker, or on the running `sleuth up` of this SLEUTH_HOME. Off loopback,
    basic auth is on: --basic-auth, SLEUTH_FLOWER_BASIC_AUTH, or a generated password printed here."""
    from cli.flower import flower_argv
    from cli.processes import existing_redis
    from workers.app import create_celery

    settings = existing_redis(_settings())
    if settings is None:
        raise ValidationFailed("SLEUTH_REDIS_URL", "no broker: set SLEUTH_REDIS_URL or start `sleuth up` first")
    argv, generated = flower_argv(settings, port=port, address=address, basic_auth=basic_auth)
    if generated:
        console.print(f"Flower basic auth: user [bold]{generated[0]}[/bold] password [bold]{generated[1]}[/bold]")
    console.print(f"Flower on http://{address}:{port}/ (broker {settings.redis_url})")
    create_celery(settings).start(argv)


@app.command()
def bench(dataset_dir: Path, mode: str = "agentic", k: int = 10,
          out: Annotated[Path, typer.Option(help="JSONL output, one line per question")] = Path("bench.jsonl"),
          executor: Annotated[str, typer.Option(help="queue | inline")] = "queue",
          limit: int | None = None, workers: int = 1, concurrency: int = 2,
          decisions: Annotated[bool, typer.Option(
              help="DATASET_DIR holds decisions.jsonl (route, gold_source_ids, answer) and kb/")] = False,
          corpus_dir: Annotated[Path | None, typer.Option(
              help="Ingest this dataset's passages instead: questions whose gold is absent must be refused")] = None,
          report: Annotated[Path | None, typer.Option(help="Also write a self-contained HTML report")] = None,
          baseline: Annotated[Path | None, typer.Option(
              help="An earlier --out file (e.g. single-shot) drawn next to this run in the report")] = None) -> None:
    """Run a benchmark folder (passages.jsonl + questions.jsonl) or a decision set; print recall, cost,
    decision, refusal, loop-health and answer figures."""
    from cli.bench import run_bench

    run_bench(_settings(), dataset_dir, mode=mode, k=k, out=out, executor=executor, limit=limit,
              workers=workers, concurrency=concurrency, console=console, decisions=decisions,
              corpus_dir=corpus_dir, report=report, baseline=baseline)


@app.command()
def trace(investigation_id: str,
          base_url: Annotated[str | None, typer.Option(help="The API's address as the browser reaches it")] = None,
          ) -> None:
    """Print a short-lived sign-in link to an investigation's trace page (no API key in the URL)."""
    from api import session
    from bootstrap import Services
    from cli.processes import running_stack
    from storage import repositories as repo

    settings = _settings()
    with Services(settings).session() as db:
        inv = repo.get_investigation(db, investigation_id=investigation_id)
        tenant = repo.get_tenant(db, tenant_id=inv.tenant_id)
    live = running_stack(settings) or {}
    base = (base_url or str(live.get("api_url") or f"http://{settings.api_host}:{settings.api_port}")).rstrip("/")
    token = session.link_token(settings, tenant.id, tenant.api_key_hash, inv.id)
    print(f"{base}/link/{token}")
    console.print(f"valid for {settings.link_ttl_seconds // 60} minutes; it signs the browser in as "
                  f"tenant {tenant.name} and opens the trace page")


@app.command()
def demo() -> None:
    """Ingest the bundled knowledge base and run sample investigations end to end through the queue."""
    from cli.demo import run_demo

    run_demo(_settings(), console=console)


def main() -> None:
    try:
        app()
    except SleuthError as exc:
        console.print(f"[red]error:[/red] {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()
