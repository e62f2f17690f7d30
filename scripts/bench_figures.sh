#!/bin/bash
# Reproduces the README evaluation figures: every benchmark run of the table, in order, on a fresh SLEUTH_HOME.
cd "$(dirname "$0")/.."
export SLEUTH_HOME=/tmp/sleuth-figures SLEUTH_SUBQUERY_CACHE_TTL=0
rm -rf /tmp/sleuth-figures
for ds in hotpotqa musique; do
  for spec in "agentic queue 2" "single-shot queue 2" "agentic inline 1" "agentic queue 1" "agentic queue 2" "agentic inline 1"; do
    set -- $spec
    echo "=== $ds $1 $2 c=$3 $(date +%T)"
    /usr/bin/time -f "wall %e s" .venv/bin/sleuth bench examples/bench/$ds --mode $1 --k 10 --executor $2 --concurrency $3 --out /tmp/sleuth-bench-$ds-$1-$2-$3.jsonl 2>&1
  done
done
echo DONE
