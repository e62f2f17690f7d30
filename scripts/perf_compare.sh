#!/bin/bash
# Before/after figures of issue 14 in one run, back to back on the same machine (docs/performance.md):
#   bash scripts/perf_compare.sh BEFORE_WORKTREE AFTER_WORKTREE OUT_DIR [SOURCE_HOMES_DIR]
# Each worktree needs a .venv (make install, or a symlink to another worktree's .venv: every run puts
# the worktree first on PYTHONPATH, so an editable install of another checkout does not shadow it). For every sample bench both run on copies of ONE
# ingested SLEUTH_HOME (identical indexes: BM25 statistics depend on everything a home holds), inline,
# sub-query cache off; the per-question JSONL are compared (every field but latency and id), and AFTER runs
# the support set once more with SLEUTH_TEXT_CACHE=false. Then ingest (examples/kb, fresh homes), the
# embedder alone, and the HTTP API (sleuth up --workers 1) unless BENCH_ONLY=1. Prints one JSON line per
# measurement. SKIP_BENCH=1 runs only ingest, embedder and API; ONLY=examples,parcelo a subset of the benches.
set -uo pipefail
BEFORE=$(realpath "$1"); AFTER=$(realpath "$2"); OUT=$(realpath -m "$3"); SRC=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export SLEUTH_SUBQUERY_CACHE_TTL=0
DATASETS=("examples:examples --decisions" "parcelo:examples/parcelo --decisions"
          "hotpotqa:examples/bench/hotpotqa --mode agentic --k 10" "musique:examples/bench/musique --mode agentic --k 10")

home_for() {  # a home holding only this dataset's corpus, ingested once (by BEFORE) and then copied
  local name=$1 args=$2 src="$OUT/home-$name"
  if [ -n "$SRC" ] && [ -d "$SRC/h-base-$name" ] && [ ! -d "$src" ]; then cp -a "$SRC/h-base-$name" "$src"; fi
  if [ ! -d "$src" ]; then
    (cd "$BEFORE" && PYTHONPATH="$BEFORE" SLEUTH_HOME="$src" .venv/bin/sleuth bench $args --executor inline --limit 1 \
      --out "$OUT/ingest-$name.jsonl" 2>&1 | grep -E "^ingested")
  fi
  rm -rf "$src/run"
}

bench() {  # side name args [extra env]
  local side=$1 tree=$2 name=$3 args=$4 extra=${5:-}
  rm -rf "$OUT/h-$side-$name"; cp -a "$OUT/home-$name" "$OUT/h-$side-$name"
  echo "=== $name $side $(date -u +%T)"
  (cd "$tree" && env $extra PYTHONPATH="$tree" SLEUTH_HOME="$OUT/h-$side-$name" .venv/bin/python "$HERE/bench_timed.py" $args \
     --executor inline --out "$OUT/$side-$name.jsonl" 2>&1 | tail -1)
  rm -rf "$OUT/h-$side-$name"
}

[ -n "${SKIP_BENCH:-}" ] && DATASETS=()
if [ -n "${ONLY:-}" ]; then  # ONLY=examples,parcelo: a subset of the sample benches
  kept=(); for entry in "${DATASETS[@]}"; do [[ ",$ONLY," == *",${entry%%:*},"* ]] && kept+=("$entry"); done
  DATASETS=("${kept[@]}")
fi
for entry in "${DATASETS[@]}"; do
  name=${entry%%:*}; args=${entry#*:}
  home_for "$name" "$args"
  bench before "$BEFORE" "$name" "$args"
  bench after "$AFTER" "$name" "$args"
  [ "$name" = examples ] && bench after-uncached "$AFTER" "$name" "$args" SLEUTH_TEXT_CACHE=false
  python3 "$HERE/compare_rows.py" "$OUT/before-$name.jsonl" "$OUT/after-$name.jsonl"
done
[ -f "$OUT/after-uncached-examples.jsonl" ] && python3 "$HERE/compare_rows.py" "$OUT/after-examples.jsonl" \
  "$OUT/after-uncached-examples.jsonl" "after cached vs SLEUTH_TEXT_CACHE=false"

[ -n "${BENCH_ONLY:-}" ] && { echo "DONE (BENCH_ONLY) $(date -u +%T)"; exit 0; }
for side in before after; do  # ingest of the demo KB into a fresh home: documents, chunks, seconds
  tree=$BEFORE; [ $side = after ] && tree=$AFTER
  rm -rf "$OUT/ingest-$side"
  (cd "$tree" && export PYTHONPATH="$tree" SLEUTH_HOME="$OUT/ingest-$side" && .venv/bin/sleuth tenants create kb --json >/dev/null \
     && /usr/bin/time -f "{\"ingest\": \"$side\", \"wall_s\": %e, \"cpu_s\": %U}" .venv/bin/sleuth ingest examples/kb \
        --tenant kb --json 2>&1 | tail -2)
  echo "=== embedder $side"
  (cd "$tree" && PYTHONPATH="$tree" .venv/bin/python "$HERE/embed_bench.py" --limit 300 --threads 2 2>&1 | tail -1)
done

for side in before after; do
  tree=$BEFORE; [ $side = after ] && tree=$AFTER
  echo "=== api $side $(date -u +%T)"
  rm -rf "$OUT/api-$side"
  # PYTHONPATH: the stack (API, workers) runs this side's checkout even when its .venv is another's
  PYTHONPATH="$tree" "$AFTER/.venv/bin/python" "$HERE/api_bench.py" --sleuth "$tree/.venv/bin/sleuth" \
    --home "$OUT/api-$side" --single 30
done
echo "DONE $(date -u +%T)"
