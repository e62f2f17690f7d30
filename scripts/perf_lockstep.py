"""Before/after in lockstep: two checkouts' inline benches take turns, one investigation each.

    python3 scripts/perf_lockstep.py BEFORE_CHECKOUT AFTER_CHECKOUT INGESTED_HOME BENCH_ARGS...
    e.g. git worktree add ../sleuth-before HEAD~3 && (cd ../sleuth-before && make install)
         SLEUTH_HOME=/tmp/ab-home SLEUTH_SUBQUERY_CACHE_TTL=0 .venv/bin/sleuth bench examples/bench/hotpotqa
         \\
             --executor inline --limit 1 --out /tmp/ab-ingest.jsonl
         python3 scripts/perf_lockstep.py ../sleuth-before . /tmp/ab-home examples/bench/hotpotqa --mode
         agentic --k 10

A shared host's speed swings from one few-second phase to the next, so two benches run one after the
other compare phases as much as code. Here both run at once, each with `scripts/bench_timed.py` in its
own checkout (with its own .venv) on its own copy of one ingested home, and wait for their turn before
every timed investigation: investigation i of BEFORE, then investigation i of AFTER (the order swapped
every round), so both sides meet the same phases. Only one investigation runs at a time, so neither
slows the other. Prints each side's bench_timed line and the rows that differ (every field but timing
and the investigation's id). BEFORE_HOME=DIR gives BEFORE its own ingested home (a checkout whose schema
or ingest differs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare_rows import compared  # scripts/ is not a package: found through the path insert above


def main() -> None:
    before, after, home = (Path(a).resolve() for a in sys.argv[1:4])
    args = sys.argv[4:]
    work = Path(tempfile.mkdtemp())
    sides: dict[str, dict[str, object]] = {}
    try:
        homes = {"before": Path(os.environ.get("BEFORE_HOME") or home).resolve(), "after": home}
        for name, tree in (("before", before), ("after", after)):
            copy = work / f"home-{name}"
            shutil.copytree(homes[name], copy, symlinks=True)
            shutil.rmtree(copy / "run", ignore_errors=True)
            go_read, go_write = os.pipe()
            done_read, done_write = os.pipe()
            env = {**os.environ, "PYTHONPATH": str(tree), "SLEUTH_HOME": str(copy),
                   "SLEUTH_SUBQUERY_CACHE_TTL": "0", "SLEUTH_BENCH_LOCKSTEP": f"{go_read},{done_write}"}
            with (work / f"{name}.log").open("w") as log:  # a file, not a pipe: no output can block the turns
                proc = subprocess.Popen(
                    [
                        str(tree / ".venv/bin/python"),
                        str(HERE / "bench_timed.py"),
                        *args,
                        "--executor",
                        "inline",
                        "--out",
                        str(work / f"{name}.jsonl"),
                    ],
                    cwd=tree,
                    env=env,
                    pass_fds=(go_read, done_write),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            os.close(go_read)
            os.close(done_write)
            sides[name] = {"proc": proc, "go": go_write, "done": done_read, "live": True}
        for side in sides.values():  # both warmed up before the first turn
            side["live"] = bool(os.read(side["done"], 1))  # type: ignore[arg-type]
        order = ["before", "after"]
        while any(s["live"] for s in sides.values()):
            for name in order:
                side = sides[name]
                if not side["live"]:
                    continue
                try:
                    os.write(side["go"], b".")  # type: ignore[arg-type]
                except BrokenPipeError:  # the bench finished (or failed) and closed its end
                    side["live"] = False
                    continue
                if not os.read(side["done"], 1):  # type: ignore[arg-type]
                    side["live"] = False
            order.reverse()
        for name, side in sides.items():
            side["proc"].wait()  # type: ignore[attr-defined]
            out = (work / f"{name}.log").read_text().strip()
            print(name, out.splitlines()[-1] if out else "(no output)")
        print(json.dumps(compared(work / "before.jsonl", work / "after.jsonl", "before vs after")))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
