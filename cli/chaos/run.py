"""`sleuth chaos`: start one stack, run the chosen scenarios against it, print and write the figures."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from cli.chaos import report
from cli.chaos.harness import SCALES, STACK_ENV, Harness
from cli.chaos.scenarios import NOT_BUILT, SCENARIOS, Result, run_one
from investigation.errors import ValidationFailed


def run_chaos(*, scenario: str | None, scale: str, report_path: Path | None, console: Console,
              json_path: Path | None = None) -> int:
    if scale not in SCALES:
        raise ValidationFailed("scale", f"one of {', '.join(SCALES)}")
    names = list(SCENARIOS) if scenario in (None, "all") else [n.strip() for n in scenario.split(",")]
    unknown = [n for n in names if n not in SCENARIOS and n not in NOT_BUILT]
    if unknown:
        raise ValidationFailed("scenario", f"one of {', '.join([*SCENARIOS, *NOT_BUILT])}")
    harness = Harness(SCALES[scale])
    console.print(f"chaos ({scale}): preparing a stack in {harness.home} …")
    results: list[Result] = []
    try:
        harness.prepare()
        harness.start()
        console.print(f"sleuth up is ready on {harness.base}")
        for name in names:
            if name in NOT_BUILT:
                results.append(Result(name, None, note=NOT_BUILT[name]))
                continue
            console.print(f"→ {name} …")
            results.append(run_one(name, harness))
            console.print(f"  {name}: {'PASS' if results[-1].passed else results[-1].passed} "
                          f"{results[-1].figures} {results[-1].note}")
    finally:
        harness.stop()
    if scenario in (None, "all"):
        results += [Result(n, None, note=why) for n, why in NOT_BUILT.items()]
    title = f"sleuth chaos --scale {scale}"
    report.print_table(results, console, title=title)
    if report_path is not None:
        report.write_html(results, report_path, title=title, settings=STACK_ENV)
        console.print(f"report: {report_path}")
    if json_path is not None:
        json_path.write_text(json.dumps(report.as_json(results), indent=2))
    return 0 if all(r.passed is not False for r in results) else 1
