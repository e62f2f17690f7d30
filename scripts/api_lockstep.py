"""Warm single-investigation latency through the HTTP API of two checkouts, in lockstep.

    python3 scripts/api_lockstep.py BEFORE_WORKTREE AFTER_WORKTREE [ROUNDS]

`scripts/api_bench.py` measures one stack; on a host whose speed swings within seconds (docs/performance.md)
two such runs compare phases as much as code. Here both stacks run at once (`sleuth up --workers 1
--concurrency 2` each, from its own checkout, on its own fresh home with examples/kb), are warmed with the
59 unmeasured questions of examples/decisions.jsonl, and then answer the 30 measured ones in turn: question
i on one stack, then on the other (the order swapped every question and round), one investigation in
flight at a time, so both meet the same phases. Prints each side's server-side (created_at → finished_at)
and client-side p50/p95 and the median of the per-question after/before ratios. Worktrees as for
scripts/perf_compare.sh (a .venv each). A benchmark command, not a test. `--after-wait=S`: AFTER's client long-polls
(`?wait=S`) instead of polling every 10 ms (with the same checkout twice: what the client's polling costs);
`--wait=S`: both clients long-poll (what the server's way of waiting costs a client).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_bench  # the stack and the HTTP helpers (after the path insert above)


def _one(http: httpx.Client, stack: api_bench.Stack, key: str, question: str,
         wait: float = 0.0) -> tuple[float, float]:
    """(server ms, client ms) of one investigation, polled every 10 ms (`wait` > 0: long polling)."""
    started = time.perf_counter()
    inv_id = api_bench._submit(http, stack.base, key, question)
    while (view := api_bench._view(http, stack.base, key, inv_id, wait))["status"] not in api_bench.TERMINAL:
        if not wait:
            time.sleep(0.01)
    return api_bench._server_ms(view), (time.perf_counter() - started) * 1000


def main() -> None:
    def option(name: str) -> float:
        return float(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith(f"--{name}=")), 0))

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    both = option("wait")
    waits = {"before": both, "after": option("after-wait") or both}
    trees = {"before": Path(args[0]).resolve(), "after": Path(args[1]).resolve()}
    rounds = int(args[2]) if len(args) > 2 else 2
    work = Path(tempfile.mkdtemp(prefix="sleuth-api-lockstep-"))
    questions = [json.loads(line)["question"]
                 for line in (api_bench.ROOT / "examples" / "decisions.jsonl").read_text().splitlines() if line.strip()]
    measured = questions[11:41]
    others = [q for q in questions if q not in measured]
    stacks: dict[str, api_bench.Stack] = {}
    keys: dict[str, str] = {}
    try:
        for name, tree in trees.items():
            stack = api_bench.Stack(tree / ".venv" / "bin" / "sleuth", work / name, api_bench._free_port(), 1, 2)
            stack.env["PYTHONPATH"], stack.cwd = str(tree), str(tree)  # the stack runs its own checkout's code
            keys[name] = stack.prepare()
            stack.start()
            stacks[name] = stack
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        with httpx.Client(timeout=60) as http:
            time.sleep(5)
            for name, stack in stacks.items():  # warm: models loaded, the knowledge base's passages read
                for question in others:
                    _one(http, stack, keys[name], question)
            for r in range(rounds):
                for i, question in enumerate(measured):
                    order = ["before", "after"] if (i + r) % 2 == 0 else ["after", "before"]
                    for name in order:
                        times[name].append(_one(http, stacks[name], keys[name], question, waits[name]))
    finally:
        for stack in stacks.values():
            stack.stop()
        shutil.rmtree(work, ignore_errors=True)  # both stacks' homes
    out: dict[str, object] = {"rounds": rounds, "questions": len(measured), "waits": waits}
    for name, pairs in times.items():
        server, client = [s for s, _c in pairs], [c for _s, c in pairs]
        out[name] = {"server_ms_p50": round(statistics.median(server), 1),
                     "server_ms_p95": round(api_bench._p(server, 0.95), 1),
                     "client_ms_p50": round(statistics.median(client), 1),
                     "client_ms_p95": round(api_bench._p(client, 0.95), 1)}
    ratios = [a[0] / b[0] for a, b in zip(times["after"], times["before"], strict=True) if b[0] > 0]
    out["server_ms_after_over_before_median"] = round(statistics.median(ratios), 3)
    out["client_ms_after_over_before_median"] = round(statistics.median(
        [a[1] / b[1] for a, b in zip(times["after"], times["before"], strict=True) if b[1] > 0]), 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
