"""Investigations through the HTTP API of a real `sleuth up --workers 1`: warm single-investigation latency
(p50/p95) and the throughput of a burst of the demo-KB questions. A benchmark command, not a test.

    .venv/bin/python scripts/api_bench.py [--sleuth PATH/bin/sleuth] [--home DIR] [--single 30]

`--sleuth` picks the Sleuth installation under test (another worktree's venv for a before/after run in
one go; with PYTHONPATH=TREE the stack runs that checkout's code on it: its processes start in TREE, since
`python -m …` children put their working directory before PYTHONPATH on sys.path); the client here only
speaks HTTP. The stack runs on a fresh SLEUTH_HOME (the KB is ingested
once), with the tenant's intake and in-flight caps off so the burst measures the workers, not fairness.
Before the 30 measured questions (questions 12-41 of examples/decisions.jsonl), the other 59 run one after
another as the warm-up (`--warmup N`: N of them), so the measured ones find pool processes that have served
the same knowledge base, and never a question of their own asked before.
Server-side times are the investigation's own `created_at` → `finished_at`; the client polls every 10 ms
(`--wait S`: long polls instead; `--sse`: follows each investigation's event stream to its `end` event, and
reports how long after `finished_at` that event arrived).
The first two investigations' server times are printed too (`first_two_server_ms`: the pool processes
as they started, `--settle` seconds after the API was ready), and each phase's CPU seconds by process
(`cpu_seconds`: API, worker main process, pool processes, beat, embedded Redis; Linux /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TERMINAL = ("answered", "refused", "failed")

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


class Stack:
    def __init__(self, sleuth: Path, home: Path, port: int, workers: int, concurrency: int) -> None:
        self.sleuth, self.home, self.port = sleuth, home, port
        self.workers, self.concurrency = workers, concurrency
        self.base = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        self.env.update({"SLEUTH_HOME": str(home), "SLEUTH_TENANT_MAX_IN_FLIGHT": "0",
                         "SLEUTH_TENANT_INTAKE_PER_MINUTE": "0", "SLEUTH_SUBQUERY_CACHE_TTL": "0",
                         "SLEUTH_LOG_LEVEL": "WARNING"})
        # The checkout under test (PYTHONPATH's first entry) is also the stack's working directory: `sleuth
        # up` starts its workers with `python -m`, which puts the working directory first on sys.path, so a
        # stack started from another checkout would run that one's code whatever PYTHONPATH says.
        self.cwd = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or None

    def cli(self, *args: str) -> str:
        return subprocess.run(
            [str(self.sleuth), *args], env=self.env, cwd=self.cwd, check=True, capture_output=True, text=True
        ).stdout

    def prepare(self) -> str:
        key_file = self.home / "bench-api-key"
        if key_file.exists():
            return key_file.read_text().strip()
        self.home.mkdir(parents=True, exist_ok=True)
        tenant = json.loads(self.cli("tenants", "create", f"api-bench-{os.getpid()}", "--json"))
        started = time.perf_counter()
        self.cli("ingest", str(ROOT / "examples" / "kb"), "--tenant", tenant["name"])
        print(f"ingested examples/kb in {time.perf_counter() - started:.1f}s")
        key_file.write_text(tenant["api_key"])
        return str(tenant["api_key"])

    def start(self, timeout: float = 240.0) -> None:
        log = open(self.home / "api-bench-up.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([str(self.sleuth), "up", "--port", str(self.port), "--workers",
                                      str(self.workers), "--concurrency", str(self.concurrency)],
                                     env=self.env, cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sleuth up exited; see {self.home / 'api-bench-up.log'}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("sleuth up not ready")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


def _submit(http: httpx.Client, base: str, key: str, question: str) -> str:
    response = http.post(f"{base}/v1/investigations", json={"question": question},
                         headers={"Authorization": f"Bearer {key}"})
    response.raise_for_status()
    return str(response.json()["id"])


def _view(http: httpx.Client, base: str, key: str, inv_id: str, wait: float = 0.0) -> dict[str, Any]:
    """The investigation's view; `wait` > 0: long polling (`?wait=`, held until it is terminal)."""
    response = http.get(f"{base}/v1/investigations/{inv_id}", headers={"Authorization": f"Bearer {key}"},
                        params={"wait": wait} if wait > 0 else None)
    response.raise_for_status()
    return dict(response.json())


def _server_ms(view: dict[str, Any]) -> float:
    created = datetime.fromisoformat(view["created_at"])
    finished = datetime.fromisoformat(view["finished_at"])
    return (finished - created).total_seconds() * 1000


_SERIES = ("sleuth_step_duration_seconds", "sleuth_task_queue_wait_seconds", "sleuth_intake_to_start_seconds")


def _scrape(http: httpx.Client, base: str) -> dict[str, float]:
    """Sums and counts of the step-duration and queue-wait histograms from /metrics."""
    out: dict[str, float] = {}
    for line in http.get(f"{base}/metrics").text.splitlines():
        if line.startswith(_SERIES) and ("_sum" in line.split(" ")[0] or "_count" in line.split(" ")[0]):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def _breakdown(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Mean milliseconds per step / per task's queue wait between two scrapes."""
    out: dict[str, float] = {}
    for name, total in after.items():
        if "_sum" not in name:
            continue
        count = after.get(name.replace("_sum", "_count"), 0) - before.get(name.replace("_sum", "_count"), 0)
        if count:
            label = name.replace("sleuth_", "").replace("_seconds_sum", "")
            out[f"{label} (n={int(count)})"] = round(1000 * (total - before.get(name, 0.0)) / count, 1)
    return out


def _sse_end(http: httpx.Client, base: str, key: str, inv_id: str) -> float:
    """Follow the investigation's event stream (`/events`) to its `end` event; the wall clock (epoch
    seconds) when it arrived."""
    with http.stream("GET", f"{base}/v1/investigations/{inv_id}/events",
                     headers={"Authorization": f"Bearer {key}"}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("event:") and line.partition(":")[2].strip() == "end":
                return time.time()
    raise RuntimeError(f"the event stream of {inv_id} closed without an end event")


def single(http: httpx.Client, base: str, key: str, questions: list[str], n: int,
           poll: float = 0.01, wait: float = 0.0, sse: bool = False) -> dict[str, Any]:
    """`n` investigations one after another: each submitted when the previous one is terminal, seen by a GET
    every `poll` seconds or, with `wait` > 0, by long polling (a GET held until it is terminal), or with
    `sse` by following its event stream to the `end` event (then one GET for the server's times;
    `end_lag_ms`: the end event's arrival after the server's `finished_at`, same host clock)."""
    client_ms: list[float] = []
    server_ms: list[float] = []
    submit_ms: list[float] = []
    get_ms: list[float] = []
    lag_ms: list[float] = []
    for i in range(n):
        started = time.perf_counter()
        inv_id = _submit(http, base, key, questions[i % len(questions)])
        submit_ms.append((time.perf_counter() - started) * 1000)
        if sse:
            ended = _sse_end(http, base, key, inv_id)
            client_ms.append((time.perf_counter() - started) * 1000)
            view = _view(http, base, key, inv_id)
            server_ms.append(_server_ms(view))
            lag_ms.append((ended - datetime.fromisoformat(view["finished_at"]).timestamp()) * 1000)
            continue
        while True:
            asked = time.perf_counter()
            view = _view(http, base, key, inv_id, wait)
            get_ms.append((time.perf_counter() - asked) * 1000)
            if view["status"] in TERMINAL:
                break
            if not wait:
                time.sleep(poll)
        client_ms.append((time.perf_counter() - started) * 1000)
        server_ms.append(_server_ms(view))
    return {
        "n": n,
        "client_ms_p50": round(statistics.median(client_ms), 1),
        "client_ms_p95": round(_p(client_ms, 0.95), 1),
        "server_ms_p50": round(statistics.median(server_ms), 1),
        "server_ms_p95": round(_p(server_ms, 0.95), 1),
        "server_ms_max": round(max(server_ms), 1),
        "post_ms_p50": round(statistics.median(submit_ms), 1),
        "get_ms_p50": round(statistics.median(get_ms), 1) if get_ms else None,
        "server_ms_first": [round(ms, 1) for ms in server_ms[:2]],
        **(
            {
                "end_lag_ms_p50": round(statistics.median(lag_ms), 1),
                "end_lag_ms_p95": round(_p(lag_ms, 0.95), 1),
            }
            if lag_ms
            else {}
        ),
    }


def burst(http: httpx.Client, base: str, key: str, questions: list[str]) -> dict[str, Any]:
    """Every question submitted at once; throughput from the first creation to the last finish."""
    started = time.perf_counter()
    ids = [_submit(http, base, key, q) for q in questions]
    submitted = time.perf_counter() - started
    # Waiting costs the server as little as it can: the oldest unfinished investigation is asked every 50 ms
    # and the sweep moves on only past finished ones (the queue is first come, first served). Asking every
    # unfinished one each round would take a large share of a core from the workers on a small machine, and
    # the throughput would measure the client. The figures come from the server's own timestamps, not from
    # when the client saw them.
    views: dict[str, dict[str, Any]] = {}
    pending = list(ids)
    while pending:
        view = _view(http, base, key, pending[0])
        if view["status"] in TERMINAL:
            views[pending.pop(0)] = view
            continue
        time.sleep(0.05)
    created = min(datetime.fromisoformat(v["created_at"]) for v in views.values())
    finished = max(datetime.fromisoformat(v["finished_at"]) for v in views.values())
    span = (finished - created).total_seconds()
    statuses: dict[str, int] = {}
    for v in views.values():
        statuses[v["status"]] = statuses.get(v["status"], 0) + 1
    return {"n": len(ids), "submit_seconds": round(submitted, 2), "span_seconds": round(span, 2),
            "investigations_per_second": round(len(ids) / span, 2), "statuses": statuses}


def _cpu_by_process(root: int) -> dict[str, float]:
    """CPU seconds so far of `root` (`sleuth up`) and every process under it, by role: the API, the Celery
    worker's main process, its pool processes, beat, the embedded Redis (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    seen: dict[int, tuple[int, str, float]] = {}  # pid -> (parent, command line, CPU seconds)
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        seen[int(entry)] = (int(fields[1]), cmd, (int(fields[11]) + int(fields[12])) / tick)
    out: dict[str, float] = {}
    for pid, (parent, cmd, cpu) in seen.items():
        up, depth = pid, 0
        while up in seen and up != root and depth < 8:  # walk up to `sleuth up` (a few levels at most)
            up, depth = seen[up][0], depth + 1
        if up != root:
            continue
        role = ("redis" if "redis-server" in cmd else "api" if " api " in cmd else "beat" if " beat " in cmd
                else "worker" if " worker " in cmd else "supervisor")
        if role == "worker" and " worker " in seen.get(parent, (0, "", 0.0))[1]:
            role = "worker pool"  # a child of the worker's main process
        out[role] = round(out.get(role, 0.0) + cpu, 2)
    return out


def _cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {role: round(after[role] - before.get(role, 0.0), 2) for role in sorted(after)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleuth", type=Path, default=ROOT / ".venv" / "bin" / "sleuth")
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--single", type=int, default=30)
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="investigations before measuring, of questions "
        "not measured (default: every one of them, 59 of the 89: pool processes that have served "
        "the rest of the set, models loaded and the knowledge base's passages read)",
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--questions", type=Path, default=ROOT / "examples" / "decisions.jsonl")
    parser.add_argument(
        "--poll-ms",
        type=float,
        default=10.0,
        help="single: milliseconds between two GETs "
        "of the running investigation (each GET costs the API ~4 ms of CPU, on the workers' cores)",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        help="single: long polling instead, each GET held up "
        "to this many seconds until the investigation is terminal (`?wait=`): the client's polling "
        "no longer costs the API a view every --poll-ms",
    )
    parser.add_argument("--sse", action="store_true", help="single: follow each investigation's event stream "
                        "(`/events`) to its `end` event instead of polling")
    parser.add_argument("--no-burst", action="store_true", help="only the warm single-investigation latency")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between ready and the first "
                        "investigation (what a pool process may build before work arrives)")
    args = parser.parse_args()
    scratch = None if args.home else Path(tempfile.mkdtemp(prefix="sleuth-api-bench-"))  # removed at the end
    home = args.home if scratch is None else scratch / "home"
    questions = [
        json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()
    ]
    stack = Stack(args.sleuth.resolve(), home, _free_port(), args.workers, args.concurrency)
    key = stack.prepare()
    stack.start()
    try:
        with httpx.Client(timeout=60) as http:
            time.sleep(args.settle)
            # The first investigations find pool processes as they started (cold); then warm: models
            # loaded, caches filled.
            # Warm-up questions are never measured ones: a question asked twice finds its own work cached.
            measured = questions[11:11 + args.single]
            others = [q for q in questions if q not in measured]
            cold = single(http, stack.base, key, others, len(others) if args.warmup is None else args.warmup)[
                "server_ms_first"]
            before, cpu = _scrape(http, stack.base), _cpu_by_process(stack.pid)
            one = single(
                http,
                stack.base,
                key,
                measured,
                args.single,
                poll=args.poll_ms / 1000,
                wait=args.wait,
                sse=args.sse,
            )
            one["mean_ms"] = _breakdown(before, _scrape(http, stack.base))
            after_single = _cpu_by_process(stack.pid)
            one["cpu_seconds"] = _cpu_spent(cpu, after_single)
            many = None
            if not args.no_burst:
                many = burst(http, stack.base, key, questions)
                many["cpu_seconds"] = _cpu_spent(after_single, _cpu_by_process(stack.pid))
            result = {"sleuth": str(args.sleuth), "workers": args.workers, "concurrency": args.concurrency,
                      "single_waits": "event stream" if args.sse else f"?wait={args.wait}" if args.wait
                      else f"polled every {args.poll_ms} ms",
                      "first_two_server_ms": cold, "single": one, "burst": many}
    finally:
        stack.stop()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
