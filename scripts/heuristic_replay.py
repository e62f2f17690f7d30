"""The heuristic reasoner's calls of a bench, captured once and replayed: a measure of the heuristics alone.

    # 1. capture: an inline bench whose loop records every reasoner call (arguments pickled; the bench's
    #    own scoring calls are not recorded)
    .venv/bin/python scripts/heuristic_replay.py capture /tmp/calls.pkl examples/bench/hotpotqa --mode agentic --k 10
    # 2. replay in any checkout: cold (text caches emptied first), warm (the same calls again) and fresh
    #    questions on warm passages (the first half of the questions warm the caches, the second half are
    #    timed: a long-lived worker's case), ms of CPU per question
    OTHER_TREE/.venv/bin/python scripts/heuristic_replay.py replay /tmp/calls.pkl --tree OTHER_TREE
    # 3. or count instructions, which this host's speed swings do not move (no hardware counters here):
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python scripts/heuristic_replay.py replay /tmp/calls.pkl --tree TREE --limit 20 --once
    #    minus the same with --no-work (imports and loading only): the replay's own instructions

`grade` gets a deterministic stand-in for the embedder (a unit vector seeded by each text's CRC), so its
answers are not the bench's, but the same in every checkout; the other calls get what the loop gave them.
A benchmark command, not a test (docs/performance.md, tenth pass).
"""

from __future__ import annotations

import argparse
import gc
import pickle
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

METHODS = ("grade", "judge", "select", "next_queries", "synthesize")


def _capture(out: Path, bench_args: list[str]) -> None:
    import heuristic.reasoner as reasoner_module
    import tasks.inline
    from cli.main import app

    calls: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {name: [] for name in METHODS}
    inside: list[bool] = []

    def recording(name: str) -> Any:
        method = getattr(reasoner_module.HeuristicReasoner, name)

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            if inside:  # the loop's calls only, not the bench's scoring
                calls[name].append((args, kwargs))
            return method(self, *args, **kwargs)

        return call

    for name in METHODS:
        setattr(reasoner_module.HeuristicReasoner, name, recording(name))
    run = tasks.inline.run

    def looped(*args: Any, **kwargs: Any) -> Any:
        inside.append(True)
        try:
            return run(*args, **kwargs)
        finally:
            inside.clear()

    tasks.inline.run = looped
    try:
        app(["bench", *bench_args, "--executor", "inline"], standalone_mode=False)
    finally:
        out.write_bytes(pickle.dumps(calls))
        print(f"captured {', '.join(f'{len(v)} {k}' for k, v in calls.items())} → {out}", file=sys.stderr)


def _question_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The question of a captured reasoner call (every method takes it first)."""
    return str(kwargs.get("question", args[0] if args else ""))


def stand_in_reasoner() -> Any:
    """The heuristic reasoner with a deterministic stand-in for the embedder: a unit vector seeded by each
    text's CRC (the same in every checkout and process)."""
    import numpy as np

    import heuristic.reasoner as reasoner_module

    def vectorise(texts: Any) -> Any:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out

    return reasoner_module.HeuristicReasoner(embedder=None, vectorise=vectorise)  # type: ignore[arg-type]


def _replay(calls_file: Path, limit: int | None, once: bool, work: bool) -> None:
    from investigation import memo

    calls = pickle.loads(calls_file.read_bytes())  # a file this script wrote
    reasoner = stand_in_reasoner()
    questions = len(calls["synthesize"][:limit]) or 1

    def run(keep: Callable[[str], bool] = lambda _question: True, count: int = questions) -> float:
        started = time.process_time()
        for name in METHODS:
            method = getattr(reasoner, name)
            for args, kwargs in calls[name][:limit]:
                if keep(_question_of(args, kwargs)):
                    method(*args, **kwargs)
        return 1000 * (time.process_time() - started) / max(1, count)

    if not work:
        return
    if once:
        memo.clear()
        run()
        return
    # Fresh questions on warm passages (what a long-lived worker meets): the first half of the questions
    # warm the caches, the second half are timed on their first run.
    asked = list(dict.fromkeys(_question_of(args, kwargs) for args, kwargs in calls["synthesize"][:limit]))
    first_half = set(asked[: len(asked) // 2])
    cold, warm, fresh = [], [], []
    for _ in range(5):
        memo.clear()
        gc.collect()
        cold.append(run())
        warm.append(run())
        memo.clear()
        gc.collect()
        run(lambda question: question in first_half)
        fresh.append(run(lambda question: question not in first_half, len(asked) - len(first_half)))
    print(f"cold {min(cold):.1f} ms, warm {min(warm):.1f} ms, fresh questions on warm passages {min(fresh):.1f} ms "
          f"of CPU per question (best of 5; {questions} questions)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    capture = sub.add_parser("capture")
    capture.add_argument("out", type=Path)
    capture.add_argument("bench_args", nargs=argparse.REMAINDER)
    replay = sub.add_parser("replay")
    replay.add_argument("calls", type=Path)
    replay.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the checkout whose heuristics run (default: this one)")
    replay.add_argument("--limit", type=int, default=None, help="the first N calls of each method")
    replay.add_argument("--once", action="store_true", help="one cold run, no timing (for callgrind)")
    replay.add_argument("--no-work", dest="work", action="store_false", help="imports and loading only")
    args = parser.parse_args()
    if args.command == "capture":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        _capture(args.out, args.bench_args)
    else:
        sys.path.insert(0, str(args.tree.resolve()))
        _replay(args.calls, args.limit, args.once, args.work)


if __name__ == "__main__":
    main()
