"""`sleuth capacity`: measure one investigation's costs on a stack of its own, drive Redis and PostgreSQL to
saturation, read Claude's token usage (against a Messages API given by URL), and print the model for a
number of investigations a day."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psutil
from rich.console import Console

from cli.capacity import measure, model, saturate
from cli.capacity.stack import MeasuredStack, measured_stack
from config.settings import get_settings

WARM = 2  # investigations run first on the measured stack, to load the models in its processes
RECORDED = 3  # investigations whose Redis commands the saturation run replays


def _uptime() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _record(h: MeasuredStack, n: int) -> tuple[list[list[bytes]], list[bytes]]:
    """The Redis commands of `n` investigations (MONITOR), and their ids (replays make them new)."""
    recorder = saturate.Recorder(h.redis_server.port)
    ids, _ = measure.run_batch(h, n, 20_000, timeout=600)
    return recorder.stop(), [i.encode() for i in ids]


def _llm_rows(h: MeasuredStack, ids: list[str]) -> list[dict[str, Any]]:
    from sqlmodel import select

    from bootstrap import Services
    from storage.models import Investigation, TraceEvent

    services = Services(h.settings(redis_url=h.redis_server.url))
    rows = []
    with services.session() as session:
        for inv_id in ids:
            inv = session.get(Investigation, inv_id)
            events = session.exec(select(TraceEvent).where(TraceEvent.investigation_id == inv_id,
                                                           TraceEvent.kind == "llm_call")).all()
            rows.append({"route": str(inv.route if inv else None), "calls": [dict(e.data) for e in events]})
    services.engine.dispose()
    return rows


def run_capacity(
    *,
    postgres_url: str,
    n: int,
    llm_n: int,
    anthropic_base_url: str | None,
    per_day: int,
    peak: float,
    seconds: float,
    console: Console,
    levels: tuple[int, ...] | None = None,
    json_path: Path | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"load at start": _uptime()}
    chosen = get_settings().engines.embeddings_dir  # the models' folder, when the operator names one
    embeddings = {"SLEUTH_EMBEDDINGS_DIR": str(chosen)} if chosen else {}
    with measured_stack(postgres_url, embeddings) as h:
        console.print(f"capacity: preparing a stack in {h.work} …")
        h.prepare()
        h.start()
        measure.run_batch(h, WARM, 10_000, timeout=900)  # models load: neither recorded nor counted
        commands, ids = _record(h, RECORDED)  # before the snapshots: MONITOR's traffic is not measured
        console.print(f"measuring {n} investigations (load {_uptime()}) …")
        measured = measure.measure(h, n=n, warm=0, earlier=WARM + RECORDED)  # stops the stack when done
        out["load after measuring"] = _uptime()
        out["measured"] = {k: v for k, v in measured.items() if k != "ids"}
        per = model.per_investigation(measured)
        out["per investigation"] = per
        console.print(f"Redis saturation: {len(commands)} recorded commands replayed (load {_uptime()}) …")
        out["redis saturation"] = saturate.saturate_redis(h.redis_server.port, commands, ids, seconds=seconds,
                                                          levels=levels or saturate.REDIS_LEVELS)
        console.print(f"PostgreSQL saturation (load {_uptime()}) …")
        out["postgres saturation"] = saturate.saturate_postgres(
            str(h.database_url), h.tenants["big"].id, measured["ids"][0], seconds=seconds,
            levels=levels or saturate.POSTGRES_LEVELS)
        llm = None
        if anthropic_base_url:
            h.llm_env = {"SLEUTH_LLM": "anthropic", "SLEUTH_ANTHROPIC_BASE_URL": anthropic_base_url}
            h.start()
            console.print(f"Claude (SLEUTH_LLM=anthropic at {anthropic_base_url}): {llm_n} investigations …")
            llm_ids, _ = measure.run_batch(h, llm_n, 30_000, timeout=900)
            h.stop()
            llm = model.llm_usage(_llm_rows(h, llm_ids))
            out["llm"] = llm
        out["model"] = model.scale(per, per_day=per_day, peak=peak, redis_sat=out["redis saturation"],
                                   pg_sat=out["postgres saturation"], llm=llm,
                                   ram_bytes=psutil.virtual_memory().total)
        out["load at end"] = _uptime()
    if json_path is not None:
        json_path.write_text(json.dumps(out, indent=1, default=str))
    print_report(out, console)
    return out


def _lines(title: str, values: dict[str, Any], console: Console) -> None:
    console.print(f"\n[bold]{title}[/bold]")
    for key, value in values.items():
        console.print(f"  {key}: {value}")


def print_report(out: dict[str, Any], console: Console) -> None:
    m, per = out["measured"], out["per investigation"]
    console.print(
        f"\n{m['n']} investigations ({m['terminal']} terminal: {m['statuses']}; routes {m['routes']}), "
        f"{m['wall_s']} s; load {out['load at start']} → {out['load after measuring']}"
    )
    _lines("per investigation", {k: v for k, v in per.items() if k != "steps"}, console)
    _lines("per step kind (runs, CPU ms per investigation, CPU ms per run)", per["steps"], console)
    console.print("\n[bold]Redis saturation[/bold] (recorded commands replayed, one at a time per process)")
    for row in out["redis saturation"]:
        console.print(f"  {row}")
    console.print("\n[bold]PostgreSQL saturation[/bold] (an investigation's writes through the repositories)")
    for row in out["postgres saturation"]:
        console.print(f"  {row}")
    if out.get("llm"):
        _lines("Claude tokens per investigation, by route", out["llm"]["by route"], console)
    _lines("model", out["model"], console)
    console.print(f"\nload at end: {out['load at end']}")
