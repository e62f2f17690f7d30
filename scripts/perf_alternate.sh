#!/bin/bash
# Alternating before/after runs of one sample bench on copies of one ingested home: on a host whose speed
# swings by ±10-15 % within minutes, N alternating pairs say more than one pair (docs/performance.md).
#   bash scripts/perf_alternate.sh BEFORE_WORKTREE AFTER_WORKTREE INGESTED_HOME N BENCH_ARGS...
#   e.g. bash scripts/perf_alternate.sh /work/wt/base /work/main /tmp/final5/home-examples 3 examples --decisions
# Each run prints "before|after investigations/s cpu_ms_per_investigation". PLAIN=1 runs `sleuth bench`
# itself (its summary: the run's wall time, intake and views included) instead of scripts/bench_timed.py
# (the inline loop only, model warmed first); with PLAIN=1, EXECUTOR=queue runs the bench through Celery
# (workers started in each checkout, so each side runs its own code). Worktrees as for scripts/perf_compare.sh (a .venv each).
# BEFORE_HOME=DIR gives BEFORE its own ingested home (a checkout whose schema or ingest differs, e.g. the
# issue's baseline c96e303); each side then also answers its own checkout's question files.
set -uo pipefail
BEFORE=$(realpath "$1"); AFTER=$(realpath "$2"); SRC=$(realpath "$3"); N=$4; shift 4
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export SLEUTH_SUBQUERY_CACHE_TTL=0
for _ in $(seq "$N"); do
  for side in before after; do
    tree=$BEFORE; [ "$side" = after ] && tree=$AFTER
    home=$SRC; [ "$side" = before ] && [ -n "${BEFORE_HOME:-}" ] && home=$(realpath "$BEFORE_HOME")
    rm -rf "$WORK/home"; cp -a "$home" "$WORK/home"; rm -rf "$WORK/home/run"
    if [ -n "${PLAIN:-}" ]; then
      out=$(cd "$tree" && PYTHONPATH="$tree" SLEUTH_HOME="$WORK/home" .venv/bin/sleuth bench "$@" \
            --executor "${EXECUTOR:-inline}" --out "$WORK/$side.jsonl" 2>&1)
      echo "$out" | python3 -c '
import json, sys
text = sys.stdin.read(); s = json.JSONDecoder().raw_decode(text[text.index("{\n"):])[0]
print(sys.argv[1], s["investigations_per_second"], s.get("cpu_ms_per_investigation"))' "$side"
    else
      (cd "$tree" && PYTHONPATH="$tree" SLEUTH_HOME="$WORK/home" .venv/bin/python "$HERE/bench_timed.py" "$@" \
        --executor inline --out "$WORK/$side.jsonl" 2>&1 | tail -1) | python3 -c '
import json, sys
d = json.loads(sys.stdin.read()); print(sys.argv[1], d["investigations_per_s"], d["cpu_ms_mean"])' "$side"
    fi
  done
done
