"""The embedder alone: ingest throughput (chunks/s) and single-query latency for each ONNX thread setting.

    .venv/bin/python scripts/embed_bench.py [--passages examples/bench/hotpotqa/passages.jsonl] [--threads 1,2]

No disk cache (every vector is computed), chunks embedded exactly as ingest embeds them (title + text, in
the vector index's upsert batches), queries one at a time as retrieval embeds them. CPU seconds are this
process's (all ONNX threads). A benchmark command, not a test; docs/performance.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from adapters.search.embedded_vector import chunk_embedding_text
    from adapters.search.embedder import MiniLMEmbedder
    from adapters.search.ingest import chunk_document, load_documents

    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=Path, default=ROOT / "examples" / "bench" / "hotpotqa" / "passages.jsonl")
    parser.add_argument("--questions", type=Path, default=ROOT / "examples" / "decisions.jsonl")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--limit", type=int, default=600, help="chunks embedded per setting")
    args = parser.parse_args()
    chunks = [c for d in load_documents([args.passages]) for c in chunk_document(d)][: args.limit]
    texts = [chunk_embedding_text(c) for c in chunks]
    queries = [json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()]
    for threads in (int(t) for t in args.threads.split(",")):
        embedder = MiniLMEmbedder(cache_dir=None, threads=threads)
        embedder.embed_array(["warm up"], persist=False)
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.embed_array(texts, persist=False)
        ingest_wall, ingest_cpu = time.perf_counter() - wall, time.process_time() - cpu
        latencies = []
        cpu = time.process_time()
        for q in queries:
            started = time.perf_counter()
            embedder.embed_array([f"{q} #{threads}"], persist=False)  # never an LRU hit
            latencies.append((time.perf_counter() - started) * 1000)
        query_cpu = (time.process_time() - cpu) * 1000 / len(queries)
        print(json.dumps({
            "intra_op_threads": embedder._threads, "chunks": len(texts),
            "chunks_per_s": round(len(texts) / ingest_wall, 1), "ingest_cpu_s": round(ingest_cpu, 2),
            "query_ms_p50": round(statistics.median(latencies), 2),
            "query_ms_p95": round(sorted(latencies)[int(0.95 * len(latencies))], 2),
            "query_cpu_ms": round(query_cpu, 2)}))


if __name__ == "__main__":
    main()
