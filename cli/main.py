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
from cli.process_commands import api, beat, flower, up, worker
from cli.secrets import secrets_app
from cli.sources import sources_app
from cli.tenant_commands import channels_app, tenants_app
from cli.tools import tools_app
from config.settings import Settings, get_settings
from investigation.errors import SleuthError

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
# Registered in the order `sleuth --help` lists them (the groups are shown after the commands).
app.add_typer(tenants_app, name="tenants")
app.add_typer(channels_app, name="channels")
app.add_typer(tools_app, name="tools")
app.add_typer(sources_app, name="sources")
app.add_typer(secrets_app, name="secrets")
app.add_typer(feedback_app, name="feedback")
app.command()(gaps)
console = Console(stderr=True, soft_wrap=True)  # piped output: no wrapping mid-phrase


def _settings() -> Settings:
    return get_settings()


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


app.command()(up)


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


def _levels(text: str | None) -> tuple[int, ...] | None:
    """`--levels 1,2,4`: positive process counts, rising."""
    if text is None:
        return None
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of process counts",
                                 param_hint="--levels") from None
    if not counts or min(counts) < 1 or list(counts) != sorted(set(counts)):
        raise typer.BadParameter(f"{text!r}: counts must be ≥ 1 and rising", param_hint="--levels")
    return counts


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
    levels: Annotated[
        str | None,
        typer.Option(help="Processes per saturation level, e.g. 1,2,4 "
                          "(default: Redis 1,2,4,8; PostgreSQL 1,2,4,8,16)"),
    ] = None,
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
        levels=_levels(levels),
        console=console,
        json_path=as_json,
    )


app.command()(api)
app.command()(worker)
app.command()(beat)
app.command()(flower)


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
        typer.Option(help="dev | test: one frozen half of the questions (docs/evaluation.md: the protocol)"),
    ] = None,
    kb_dir: Annotated[
        Path | None,
        typer.Option(help="With --decisions: the folder holding the set's kb/ when it is not DATASET_DIR"),
    ] = None,
) -> None:
    """Run a benchmark folder (passages.jsonl + questions.jsonl) or a decision set; print recall, cost,
    decision, refusal, loop-health and answer figures."""
    from cli.bench import run_bench

    run_bench(_settings(), dataset_dir, mode=mode, k=k, out=out, executor=executor, limit=limit,
              workers=workers, concurrency=concurrency, console=console, decisions=decisions,
              corpus_dir=corpus_dir, report=report, baseline=baseline, profile=profile, split=split,
              kb_dir=kb_dir)


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
    from cli.processes import make_files_private
    from investigation import compiled

    try:
        # The build of the heuristics (compiled, or the Python source with SLEUTH_COMPILED=false) is chosen
        # before anything imports them: `bootstrap` itself does, so it is not asked.
        compiled.use(_settings().engines.compiled)
        make_files_private(_settings())
        app()
    except SleuthError as exc:
        console.print(f"[red]error:[/red] {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()
