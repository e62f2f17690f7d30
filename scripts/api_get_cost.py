"""What one GET of an investigation costs the API process: CPU and wall per request, on a running stack.

    .venv/bin/python scripts/api_get_cost.py [CHECKOUT] [GETS] [--wait]

Starts `sleuth up --workers 1` from CHECKOUT (default: this one) on a fresh home with examples/kb, answers one
question, then GETs that finished investigation GETS times (default 1,000) in a row and reads the API
process's CPU time around the loop (`api_bench._cpu_by_process`: /proc, utime + stime). A polling client pays this per poll, on the
cores the workers need (docs/performance.md, twelfth pass). `--wait`: each GET asks `?wait=10` (terminal
already: answered at once; what the long-polling route adds to a GET). Run the same command on two checkouts
(e.g. a worktree of the base) to compare; a benchmark command, not a test.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_bench  # the stack and the HTTP helpers (after the path insert above)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tree = Path(args[0]).resolve() if args else api_bench.ROOT
    gets = int(args[1]) if len(args) > 1 else 1000
    wait = 10.0 if "--wait" in sys.argv else 0.0
    os.environ["PYTHONPATH"] = str(tree)  # the stack runs that checkout's code (api_bench.Stack reads it)
    stack = api_bench.Stack(tree / ".venv" / "bin" / "sleuth", Path(tempfile.mkdtemp()) / "home",
                            api_bench._free_port(), 1, 2)
    key = stack.prepare()
    stack.start()
    try:
        with httpx.Client(timeout=60) as http:
            inv_id = api_bench._submit(http, stack.base, key, "What is the API rate limit on the Business plan?")
            while api_bench._view(http, stack.base, key, inv_id, 10.0)["status"] not in api_bench.TERMINAL:
                pass
            for _ in range(50):  # warm: the route's statements compiled, the connection pool filled
                api_bench._view(http, stack.base, key, inv_id, wait)
            cpu, wall = api_bench._cpu_by_process(stack.pid)["api"], time.perf_counter()
            for _ in range(gets):
                api_bench._view(http, stack.base, key, inv_id, wait)
            cpu, wall = api_bench._cpu_by_process(stack.pid)["api"] - cpu, time.perf_counter() - wall
    finally:
        stack.stop()
    print(json.dumps({"checkout": str(tree), "gets": gets, "wait": wait,
                      "api_cpu_ms_per_get": round(1000 * cpu / gets, 2), "wall_ms_per_get": round(1000 * wall / gets, 2)}))


if __name__ == "__main__":
    main()
