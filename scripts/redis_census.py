"""Redis round trips of investigations through the HTTP API, by who makes them. A benchmark command, not a test.

    .venv/bin/python scripts/redis_census.py [--sleuth PATH/bin/sleuth] [--questions 40]

Starts `sleuth up --workers 1 --concurrency 2` on a fresh home (examples/kb ingested) with a
`sitecustomize` on PYTHONPATH that counts, in every process of the stack, each
`redis.connection.AbstractConnection.send_packed_command` (one per round trip: a command, a pipeline, a
script) by its first two callers in this tree but cli/main.py ("celery/kombu" when there is none: fetching,
acknowledging, task events, results, chord counters); PYTHONPATH=TREE runs another checkout's stack, as
for scripts/api_bench.py. The stack runs `--questions` demo questions one after another, and
the counts over everything it did (start-up and idle polling included) are divided by that number
(each process writes its counts every half second).
Also prints Redis's own SUBSCRIBE / UNSUBSCRIBE counts (`INFO commandstats`) and the output buffer of every
client (`CLIENT LIST`) at the end: a pub/sub connection nobody reads keeps one that grows.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import tempfile
import time
from pathlib import Path

import api_bench  # scripts/ is on sys.path when this file is run as a script
import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]

_COUNTER = '''
import collections, os, sys
import redis.connection as _connection

_counts, _root, _out = collections.Counter(), os.environ["CENSUS_ROOT"], os.environ["CENSUS_OUT"]
_send = _connection.AbstractConnection.send_packed_command


def _counted(self, command, check_health=True):
    frame, ours = sys._getframe(1), []
    while frame is not None and len(ours) < 2:
        name = frame.f_code.co_filename
        if name.startswith(_root) and "/.venv/" not in name and not name.endswith("cli/main.py"):
            ours.append(name[len(_root):] + ":" + frame.f_code.co_name)
        frame = frame.f_back
    _counts[" <- ".join(ours) or "celery/kombu"] += 1
    return _send(self, command, check_health)


def _snapshot():
    return dict(_counts)


_reset = _counts.clear
_connection.AbstractConnection.send_packed_command = _counted
''' + api_bench.SITE_DUMP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleuth", type=Path, default=ROOT / ".venv" / "bin" / "sleuth")
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sleuth-redis-census-"))
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(_COUNTER)
    (work / "counts").mkdir()
    stack = api_bench.Stack(args.sleuth.resolve(), work / "home", api_bench._free_port(), 1, 2)
    tree = stack.cwd or str(ROOT)
    stack.env.update({"PYTHONPATH": f"{work / 'site'}:{tree}" if stack.cwd else str(work / "site"),
                      "CENSUS_ROOT": tree.rstrip("/") + "/", "CENSUS_OUT": str(work / "counts")})
    key = stack.prepare()
    for stale in (work / "counts").glob("*.json"):  # the ingest's own
        stale.unlink()
    questions = [json.loads(line)["question"] for line in (ROOT / "examples" / "decisions.jsonl").read_text().splitlines()
                 if line.strip()][:args.questions]
    stack.start()
    sock = str(work / "home" / "run" / "redis.sock")
    try:
        client = redis.Redis(unix_socket_path=sock)
        with httpx.Client(timeout=60) as http:
            api_bench.single(http, stack.base, key, questions, len(questions))
        time.sleep(1.5)  # every process has written its counts since
        stats = client.info("commandstats")
        buffers = [{k: c[k] for k in ("id", "cmd", "sub", "psub", "omem")} for c in client.client_list()
                   if int(c.get("omem", 0))]
        client.close()
    finally:
        stack.stop()
    counts: collections.Counter[str] = collections.Counter()
    for dump in api_bench.site_dumps(work / "counts"):
        counts.update(dump)
    shutil.rmtree(work, ignore_errors=True)  # the counts are read; the stack's home is not kept
    n = len(questions)
    print(json.dumps({
        "investigations": n,
        "round_trips_per_investigation": round(sum(counts.values()) / n, 1),
        "by_caller": {caller: round(count / n, 2) for caller, count in counts.most_common(25)},
        "subscribe_calls": {name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()
                            if name.endswith("subscribe")},
        "clients_with_output_buffer": buffers,
    }, indent=2))


if __name__ == "__main__":
    main()
