"""`sleuth` command line: tenants, ingest, ask, up, api, worker, beat, flower, bench, chaos, capacity,
demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.feedback import feedback_app
from cli.gaps import gaps
from cli.secrets import secrets_app
from cli.sources import sources_app
from cli.tools import tools_app
from config.settings import Settings, get_settings
from investigation.errors import SleuthError, ValidationFailed
from workers.names import ALL_QUEUES

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
tenants_app = typer.Typer(no_args_is_help=True, help="Create and list tenants.")
app.add_typer(tenants_app, name="tenants")
channels_app = typer.Typer(
    no_args_is_help=True, help="Delivery channels of a tenant: smtp, zendesk, freshdesk."
)
app.add_typer(channels_app, name="channels")
app.add_typer(tools_app, name="tools")
app.add_typer(sources_app, name="sources")
app.add_typer(secrets_app, name="secrets")
app.add_typer(feedback_app, name="feedback")
app.command()(gaps)
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
    box = services.secret_box()
    with services.session() as session:
        tenant, key = repo.create_tenant(session, name=name, box=box, limits=limits)
        out = {"id": tenant.id, "name": tenant.name, "api_key": key,
               "webhook_secret": repo.open_webhook_secret(tenant, box)}
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


@tenants_app.command("rotate-key")
def tenants_rotate_key(name: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """A new API key for the tenant (shown once); the old key, its console sessions and links stop working."""
    from cli.tenant_keys import rotate_key

    rotate_key(_settings(), tenant=name, as_json=as_json, console=console)


@tenants_app.command("update")
def tenants_update(
    name: str,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Open a host (name or address) for this tenant's deliveries although it is "
            "private/loopback; repeatable"
        ),
    ] = None,
    remove_host: Annotated[list[str] | None, typer.Option(help="Close a host again; repeatable")] = None,
    retention_days: Annotated[
        int | None,
        typer.Option(help="Days its trace events and evidence text are kept (answers and citations stay)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Change a tenant: its outbound allowlist, its retention."""
    from cli.channels import update_tenant
    from cli.tenant_admin import set_retention

    if retention_days is not None:
        set_retention(_settings(), tenant=name, days=retention_days, as_json=as_json)
    if allow_host or remove_host or retention_days is None:
        update_tenant(
            _settings(), tenant=name, allow=allow_host or [], disallow=remove_host or [], as_json=as_json
        )


@tenants_app.command("remove")
def tenants_remove(
    name: str,
    confirm: Annotated[bool, typer.Option("--confirm", help="Yes, remove it for good")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Remove a tenant and everything of it: rows in every table, Redis state, index entries in every
    engine."""
    from cli.tenant_admin import remove

    remove(_settings(), tenant=name, confirm=confirm, as_json=as_json, console=console)


_SECRET_HELP = "name of the environment variable holding it, or - for stdin"


@channels_app.command("add")
def channels_add(
    name: str,
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    type_: Annotated[str, typer.Option("--type", help="smtp | zendesk | freshdesk")],
    host: Annotated[str | None, typer.Option(help="smtp: relay host")] = None,
    port: Annotated[int | None, typer.Option(help="smtp: relay port (default 587)")] = None,
    username: Annotated[str | None, typer.Option(help="smtp: AUTH user")] = None,
    password_env: Annotated[str | None, typer.Option(help=f"smtp: AUTH password, {_SECRET_HELP}")] = None,
    starttls: Annotated[bool, typer.Option("--starttls", help="smtp: upgrade with STARTTLS")] = False,
    ssl: Annotated[bool, typer.Option("--ssl", help="smtp: implicit TLS (port 465)")] = False,
    from_: Annotated[str | None, typer.Option("--from", help="smtp: sender address")] = None,
    subdomain: Annotated[str | None, typer.Option(help="zendesk: SUBDOMAIN.zendesk.com")] = None,
    email: Annotated[str | None, typer.Option(help="zendesk: the API user's e-mail")] = None,
    token_env: Annotated[str | None, typer.Option(help=f"zendesk: API token, {_SECRET_HELP}")] = None,
    signing_secret_env: Annotated[str | None, typer.Option(
        help=f"zendesk: webhook signing secret (inbound hooks), {_SECRET_HELP}")] = None,
    domain: Annotated[str | None, typer.Option(help="freshdesk: acme.freshdesk.com (or acme)")] = None,
    api_key_env: Annotated[str | None, typer.Option(help=f"freshdesk: API key, {_SECRET_HELP}")] = None,
    inbound_secret_env: Annotated[str | None, typer.Option(
        help=f"freshdesk: X-Sleuth-Secret of inbound hooks, {_SECRET_HELP}")] = None,
    base_url: Annotated[str | None, typer.Option(help="helpdesks: self-hosted proxy or test server")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Add a delivery channel; secrets come from environment variables (or stdin), never from flags."""
    from cli.channels import add, read_secret

    fields = {"type": type_, "host": host, "port": port, "username": username,
              "password": read_secret("password_env", password_env), "starttls": starttls or None,
              "ssl": ssl or None, "from": from_, "subdomain": subdomain, "email": email,
              "token": read_secret("token_env", token_env),
              "signing_secret": read_secret("signing_secret_env", signing_secret_env), "domain": domain,
              "api_key": read_secret("api_key_env", api_key_env),
              "inbound_secret": read_secret("inbound_secret_env", inbound_secret_env), "base_url": base_url}
    add(_settings(), name=name, tenant=tenant, fields=fields, as_json=as_json)


@channels_app.command("list")
def channels_list(tenant: Annotated[str, typer.Option(help="Tenant name")],
                  as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The tenant's channels (secrets masked)."""
    from cli.channels import list_

    list_(_settings(), tenant=tenant, as_json=as_json)


@channels_app.command("remove")
def channels_remove(name: str, tenant: Annotated[str, typer.Option(help="Tenant name")]) -> None:
    """Remove a channel; pending deliveries to it end dead."""
    from cli.channels import remove

    remove(_settings(), name=name, tenant=tenant)


@app.command()
def ingest(
    paths: list[Path],
    tenant: Annotated[str, typer.Option(help="Tenant name")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
    force: Annotated[bool, typer.Option(help="Write every document again, changed or not")] = False,
) -> None:
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


@app.command()
def chaos(
    scenario: Annotated[
        str | None, typer.Option(help="Scenario name(s), comma-separated (default: all)")
    ] = None,
    scale: Annotated[str, typer.Option(help="small | full")] = "small",
    report: Annotated[Path | None, typer.Option("--report", help="Write an HTML report here")] = None,
    as_json: Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON here")] = None,
    postgres: Annotated[
        str | None,
        typer.Option(
            "--postgres", help="PostgreSQL server URL where a scratch database may be created (database-down)"
        ),
    ] = None,
    broker: Annotated[
        str, typer.Option(help="broker-restart: the broker(s) restarted, comma-separated (redis, rabbitmq)")
    ] = "redis,rabbitmq",
) -> None:
    """Run fault scenarios against a real `sleuth up` on this machine; print the figures (exit 1 on a
    failure)."""
    from cli.chaos.run import run_chaos

    raise typer.Exit(run_chaos(scenario=scenario, scale=scale, report_path=report, console=console,
                               json_path=as_json, postgres_url=postgres, brokers=broker))


@app.command()
def capacity(
    postgres: Annotated[
        str, typer.Option("--postgres", help="PostgreSQL server URL where a scratch database may be created")
    ],
    n: Annotated[int, typer.Option(help="Investigations measured")] = 40,
    llm_n: Annotated[int, typer.Option(help="Investigations run with SLEUTH_LLM=anthropic")] = 20,
    anthropic_base_url: Annotated[
        str | None,
        typer.Option(help="Messages API for the token figures (e.g. the tests' fake server); none: skipped"),
    ] = None,
    per_day: Annotated[int, typer.Option(help="Investigations a day to size for")] = 1_000_000,
    peak: Annotated[float, typer.Option(help="Peak rate ÷ average rate")] = 3.0,
    seconds: Annotated[float, typer.Option(help="Seconds per saturation level")] = 8.0,
    as_json: Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON here")] = None,
) -> None:
    """Measure one investigation's CPU, broker, Redis, SQL, storage and LLM costs on a stack of its own, drive
    Redis and PostgreSQL to saturation, and print the capacity model (docs/capacity.md)."""
    from cli.capacity.run import run_capacity

    run_capacity(
        postgres_url=postgres,
        n=n,
        llm_n=llm_n,
        anthropic_base_url=anthropic_base_url,
        per_day=per_day,
        peak=peak,
        seconds=seconds,
        console=console,
        json_path=as_json,
    )


@app.command()
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


@app.command()
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


@app.command()
def beat(loglevel: str = "INFO") -> None:
    """Run Celery beat alone (the watchdog schedule) — one per deployment."""
    from workers.app import create_celery

    create_celery(_settings()).start([*_quiet_when_json(), "beat", f"--loglevel={loglevel}", "-s",
                                      str(_beat_schedule_file(_settings()))])


@app.command()
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


@app.command()
def bench(
    dataset_dir: Path,
    mode: str = "agentic",
    k: int = 10,
    out: Annotated[Path, typer.Option(help="JSONL output, one line per question")] = Path("bench.jsonl"),
    executor: Annotated[str, typer.Option(help="queue | inline")] = "queue",
    limit: int | None = None,
    workers: int = 1,
    concurrency: int = 2,
    decisions: Annotated[
        bool, typer.Option(help="DATASET_DIR holds decisions.jsonl (route, gold_source_ids, answer) and kb/")
    ] = False,
    corpus_dir: Annotated[
        Path | None,
        typer.Option(
            help="Ingest this dataset's passages instead: questions whose gold is absent must be refused"
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Also write a self-contained HTML report")] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(help="An earlier --out file (e.g. single-shot) drawn next to this run in the report"),
    ] = None,
    profile: Annotated[
        Path | None,
        typer.Option(help="Write a cProfile of the run here (docs/performance.md says how to read it)"),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(help="dev | test: one frozen half of the questions (docs/evaluation.md, 'Splits')"),
    ] = None,
) -> None:
    """Run a benchmark folder (passages.jsonl + questions.jsonl) or a decision set; print recall, cost,
    decision, refusal, loop-health and answer figures."""
    from cli.bench import run_bench

    run_bench(_settings(), dataset_dir, mode=mode, k=k, out=out, executor=executor, limit=limit,
              workers=workers, concurrency=concurrency, console=console, decisions=decisions,
              corpus_dir=corpus_dir, report=report, baseline=baseline, profile=profile, split=split)


@app.command()
def trace(
    investigation_id: str,
    base_url: Annotated[str | None, typer.Option(help="The API's address as the browser reaches it")] = None,
    full_console: Annotated[
        bool,
        typer.Option(
            "--console",
            help=(
                "The link's session may open the whole console (list, other traces, Redeliver), not only "
                "this trace"
            ),
        ),
    ] = False,
) -> None:
    """Print a single-use, short-lived sign-in link to an investigation's trace page (no API key in the
    URL); its session sees that trace only, read-only, unless --console."""
    from api import session
    from bootstrap import Services
    from cli.processes import running_stack
    from storage import repositories as repo

    settings = _settings()
    with Services(settings).session() as db:
        inv = repo.get_investigation(db, investigation_id=investigation_id)
        tenant = repo.get_tenant(db, tenant_id=inv.tenant_id)
    live = running_stack(settings) or {}
    base = (base_url or str(live.get("api_url") or f"http://{settings.api_host}:{settings.api_port}")).rstrip(
        "/"
    )
    token = session.link_token(settings, tenant.id, tenant.api_key_hash, inv.id, console=full_console)
    print(f"{base}/link/{token}")
    reach = "the whole console" if full_console else "this trace only, read-only"
    console.print(
        f"valid for {settings.security.link_ttl_seconds // 60} minutes and works once; it signs the browser "
        "in "
        f"as tenant {tenant.name} for {settings.security.link_session_ttl_seconds // 60} minutes ({reach})"
    )


@app.command()
def demo() -> None:
    """Ingest the bundled knowledge base and run sample investigations end to end through the queue."""
    from cli.demo import run_demo

    run_demo(_settings(), console=console)


def main() -> None:
    from bootstrap.heuristics import choose_heuristics_build
    from cli.processes import make_files_private

    try:
        choose_heuristics_build(_settings())  # before any command imports the heuristics
        make_files_private(_settings())
        app()
    except SleuthError as exc:
        console.print(f"[red]error:[/red] {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()
