"""Scenarios of load on the API: a burst of one tenant against another's latency (fairness), and
schemathesis fuzzing the live API."""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from cli.chaos.harness import DepthSampler, Harness
from cli.chaos.result import Result, _latency, _pct, _q


def burst(h: Harness) -> Result:
    """`big` submits a burst while `small` keeps asking: small's p95 within 2x of its unloaded p95."""
    warm = h.submit("small", _q(99))  # a first question loads models in every process: not a figure
    h.wait_all("small", [warm], timeout=120)
    unloaded = []
    for i in range(h.scale.burst_small):
        inv = h.submit("small", _q(100 + i))
        view = h.wait_all("small", [inv], timeout=120).get(inv)
        if view and (seconds := _latency(view)) is not None:
            unloaded.append(seconds)
    with DepthSampler(h) as sampler, ThreadPoolExecutor(max_workers=8) as pool, httpx.Client(timeout=30) as c:
        big_ids = list(pool.map(lambda i: h.submit("big", _q(200 + i), client=c), range(h.scale.burst_big)))
        # Then `small` asks as it did unloaded: one question, its answer, the next (like for like: its own
        # questions never queue behind each other, so the ratio measures what the burst does to it).
        small_ids, small_done = [], {}
        for i in range(h.scale.burst_small):
            small_ids.append(h.submit("small", _q(300 + i), client=c))
            small_done.update(h.wait_all("small", small_ids[-1:], timeout=300))
        big_running = sum(1 for v in big_done_so_far(h, big_ids, c) if v is None)
        big_done = h.wait_all("big", big_ids, timeout=1800)
    held_peak = max((held for _, _, held in sampler.held), default=0)
    parked_peak = max((n for _, name, n in sampler.parked if name == "big"), default=0)
    parked_small = max((n for _, name, n in sampler.parked if name == "small"), default=0)
    lat: dict[str, list[float]] = {
        "big": [b for v in big_done.values() if (b := _latency(v)) is not None],
        "small": [s for v in small_done.values() if (s := _latency(v)) is not None]}
    base_p95 = _pct(unloaded, 95)
    figures = {"burst (big)": h.scale.burst_big, "small during burst": h.scale.burst_small,
               "big not finished when small was done": big_running,
               "completed": f"{len(big_done) + len(small_done)}/{len(big_ids) + len(small_ids)}",
               "small unloaded p95 s": base_p95, "big held back (peak)": held_peak,
               "big steps parked (peak)": parked_peak, "small steps parked (peak)": parked_small}
    for tenant, values in lat.items():
        figures[f"{tenant} p50/p95/p99 s"] = f"{_pct(values, 50)}/{_pct(values, 95)}/{_pct(values, 99)}"
    ok = (len(big_done) == len(big_ids) and len(small_done) == len(small_ids)
          and _pct(lat["small"], 95) <= 2 * max(base_p95, 1.0))
    parked = [(t, n) for t, name, n in sampler.parked if name == "big"]
    series = {"small (unloaded)": unloaded, "small (during the burst)": lat["small"], "big": lat["big"]}
    return Result("burst-fairness", ok, figures, charts={"latency": series, "depth": sampler.samples,
                                                         "parked": parked})


def big_done_so_far(h: Harness, ids: list[str], client: httpx.Client) -> list[dict[str, Any] | None]:
    """Each of `ids` viewed once: its view when terminal, else None (the burst still running?)."""
    views = [h.view("big", i, client) for i in ids]
    return [v if v is not None and v["status"] in ("answered", "refused", "failed") else None for v in views]


def schemathesis_run(h: Harness) -> Result:
    """schemathesis against the live API: 0 server errors, 0 undocumented responses."""
    checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    binary = Path(sys.executable).parent / "schemathesis"
    if not binary.exists():
        return Result("schemathesis", None, note="schemathesis is not installed (dev extra)")
    run = subprocess.run([str(binary), "run", f"{h.base}/openapi.json", "-H",
                          f"Authorization: Bearer {h.tenants['small'].key}", "--checks", checks,
                          "--phases", h.scale.st_phases, "-n", str(h.scale.st_examples), "--seed", "1"],
                         capture_output=True, text=True, timeout=1800, check=False)
    summary = run.stdout.split("SUMMARY")[-1]
    generated = re.search(r"(\d+) generated", summary)
    failures = re.findall(r"❌ (ST\d+ [^:]+): (\d+)", summary)
    figures = {"test cases": int(generated.group(1)) if generated else "?",
               "server errors": sum(int(c) for n, c in failures if "Server error" in n),
               "undocumented responses": sum(int(c) for n, c in failures if "Undocumented" in n),
               "other failures": sum(int(c) for n, c in failures if "Server error" not in n
                                     and "Undocumented" not in n)}
    return Result("schemathesis", run.returncode == 0, figures)
