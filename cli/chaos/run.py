"""`sleuth chaos`: start one stack, run the chosen scenarios against it, then the scenarios that need a stack
of their own (PostgreSQL behind a proxy, an LLM provider storm); print and write the figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from rich.console import Console

from cli.chaos import faults, report
from cli.chaos.harness import SCALES, STACK_ENV, Harness, Scale
from cli.chaos.llm_storm import StormServer
from cli.chaos.result import Result
from cli.chaos.scenarios import SCENARIOS, run_one
from investigation.errors import ValidationFailed

SHARED = {**SCENARIOS, "injection-corpus": faults.injection_corpus}
OWN_STACK = ("database-down", "llm-storm", "redis-restart-external", "partition", "broker-restart")


def _own_stack(
    name: str, scale: Scale, postgres_url: str | None
) -> tuple[AbstractContextManager[Harness] | None, Callable[[Harness], Result], Callable[[], None]]:
    """(the stack's context manager or None when it cannot run here, the scenario, clean-up)."""
    if name.startswith("broker-restart-"):  # one per broker (`--broker`)
        from cli.chaos import broker_restart as br

        return br.broker_stack(scale, name.removeprefix("broker-restart-")), br.broker_restart, lambda: None
    if name == "database-down":
        stack = faults.postgres_stack(scale, postgres_url) if postgres_url else None
        return stack, faults.database_down, lambda: None
    if name == "partition":
        from cli.chaos.partition import partition
        from cli.chaos.partition_stack import partition_stack

        return (partition_stack(scale, postgres_url) if postgres_url else None), partition, lambda: None  # type: ignore[return-value]
    if name == "redis-restart-external":
        return faults.external_redis_stack(scale), faults.redis_restart_external, lambda: None
    storm = StormServer()
    return faults.storm_stack(scale, storm), lambda h: faults.llm_storm(h, storm), storm.close


def _partition_not_permitted() -> str | None:
    from cli.chaos.partition import not_permitted

    return not_permitted()


def _not_runnable(name: str) -> str | None:
    """Why a scenario cannot run on this machine (it is then reported skipped), or None."""
    if name == "partition":
        return _partition_not_permitted()
    if name.startswith("broker-restart-"):
        from cli.chaos.broker_restart import DEFAULT_RABBITMQ_URL, not_available

        return not_available(name.removeprefix("broker-restart-"), DEFAULT_RABBITMQ_URL)
    return None


def _start(harness: Harness, console: Console) -> None:
    console.print(f"chaos ({harness.scale.name}): preparing a stack in {harness.home} …")
    harness.prepare()
    harness.start()
    console.print(f"sleuth up is ready on {harness.base}")


def _keep_or_discard(harness: Harness, results: list[Result], expected: int, console: Console) -> None:
    """A stopped stack's working folder is removed when every scenario it ran passed (or could not run here);
    kept, and named, when one failed or the run broke off: its `up.log` and home say what happened."""
    if len(results) == expected and all(r.passed is not False for r in results):
        harness.discard()
    else:
        console.print(f"kept for inspection: {harness.work} (up.log, home/)")


def _report_one(result: Result, console: Console) -> None:
    console.print(
        f"  {result.name}: {'PASS' if result.passed else result.passed} {result.figures} {result.note}"
    )


def run_chaos(*, scenario: str | None, scale: str, report_path: Path | None, console: Console,
              json_path: Path | None = None, postgres_url: str | None = None,
              brokers: str = "redis,rabbitmq") -> int:
    if scale not in SCALES:
        raise ValidationFailed("scale", f"one of {', '.join(SCALES)}")
    every = [*SHARED, *OWN_STACK]
    names = every if scenario in (None, "all") else [n.strip() for n in scenario.split(",")]
    unknown = [n for n in names if n not in every]
    if unknown:
        raise ValidationFailed("scenario", f"one of {', '.join(every)}")
    results: list[Result] = []
    if "broker-restart" in names:  # one stack per broker
        from cli.chaos.broker_restart import BROKERS

        chosen = [b.strip() for b in brokers.split(",")]
        if not chosen or any(b not in BROKERS for b in chosen):
            raise ValidationFailed("broker", f"one or more of {', '.join(BROKERS)}")
        at = names.index("broker-restart")
        names[at:at + 1] = [f"broker-restart-{b}" for b in chosen]
    shared = [n for n in names if n in SHARED]
    if shared:
        harness = Harness(SCALES[scale])
        before = len(results)
        try:
            _start(harness, console)
            for name in shared:
                console.print(f"→ {name} …")
                results.append(run_one(name, harness, SHARED[name]))
                _report_one(results[-1], console)
        finally:
            harness.stop()
            _keep_or_discard(harness, results[before:], len(shared), console)
    for name in (n for n in names if n in OWN_STACK or n.startswith("broker-restart-")):
        if (why := _not_runnable(name)) is not None:
            results.append(Result(name, None, note=f"skipped: {why}"))
            _report_one(results[-1], console)
            continue
        stack, run, clean = _own_stack(name, SCALES[scale], postgres_url)
        if stack is None:
            results.append(Result(name, None, note="needs PostgreSQL: pass --postgres URL (a server where a "
                                                   "scratch database may be created)"))
            continue
        console.print(f"→ {name} (a stack of its own) …")
        started: Harness | None = None
        try:
            with stack as own:
                started = own
                _start(own, console)
                results.append(run_one(name, own, run))
        except Exception as exc:  # noqa: BLE001 - a stack that cannot start is a failed row
            results.append(Result(name, False, note=f"{type(exc).__name__}: {exc}"[:300]))
        finally:
            clean()
        if started is not None:  # stopped by its context manager
            _keep_or_discard(started, results[-1:], 1, console)
        _report_one(results[-1], console)
    title = f"sleuth chaos --scale {scale}"
    report.print_table(results, console, title=title)
    if report_path is not None:
        report.write_html(results, report_path, title=title, settings=STACK_ENV)
        console.print(f"report: {report_path}")
    if json_path is not None:
        json_path.write_text(json.dumps(report.as_json(results), indent=2))
    return 0 if all(r.passed is not False for r in results) else 1
