"""Command line of the fake Messages API: serve it for `sleuth bench`, then report what was billed.

    python -m tests.fakes.messages_api serve --port 8765 [--embedder minilm|bow] [--min-cache-tokens 1024]
    python -m tests.fakes.messages_api report --home DIR      # needs SLEUTH_HOME's database
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

STEPS = ("route", "plan", "grade", "judge", "next_queries", "synthesize")
_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def serve(port: int, embedder: str, min_cache_tokens: int) -> None:
    from tests.fakes.messages_api import Billing, FakeMessagesAPI
    from tests.fakes.messages_brain import HeuristicBrain

    if embedder == "minilm":
        from adapters.search.embedder import MiniLMEmbedder

        chosen: Any = MiniLMEmbedder(cache_dir=Path(tempfile.gettempdir()) / "sleuth-fake-embeddings")
    else:
        from tests.unit.investigation.fakes import BagOfWordsEmbedder

        chosen = BagOfWordsEmbedder()
    api = FakeMessagesAPI(
        HeuristicBrain(chosen), billing=Billing(min_cache_tokens=min_cache_tokens), port=port
    )
    api.start()
    print(f"fake Messages API on {api.url} (brain: heuristic/{embedder}); Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        api.stop()


def report(home: Path) -> dict[str, Any]:
    """Per investigation: LLM calls and tokens by step, cost at list prices; averaged by mode and route."""
    from sqlmodel import select

    from adapters.llm.claude_pricing import cost
    from bootstrap import Services
    from config.settings import Settings
    from storage.models import Investigation, TraceEvent

    services = Services(Settings(home=home))
    rows: list[dict[str, Any]] = []
    with services.session() as session:
        for inv in session.exec(select(Investigation)).all():
            events = session.exec(select(TraceEvent).where(TraceEvent.investigation_id == inv.id)).all()
            steps: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
            usd = 0.0
            for e in events:
                if e.kind != "llm_call":
                    continue
                row = steps[str(e.data.get("step"))]
                row["calls"] += 1
                for key in _KEYS:
                    row[key] += int(e.data.get(key) or 0)
                usd += cost(str(e.data.get("model")), e.data) or 0.0
            fallbacks = sum(1 for e in events if e.kind == "llm_fallback")
            rows.append({"mode": inv.mode, "route": inv.route, "hops": inv.hops, "status": inv.status,
                         "steps": steps, "usd": usd, "fallbacks": fallbacks,
                         "calls": sum(s["calls"] for s in steps.values())})
    summary: dict[str, Any] = {}
    for mode in sorted({r["mode"] for r in rows}):
        for route in ["all", *sorted({str(r["route"]) for r in rows if r["mode"] == mode})]:
            group = [r for r in rows if r["mode"] == mode and (route == "all" or str(r["route"]) == route)]
            if not group:
                continue
            n = len(group)
            by_step = {step: {key: round(sum(r["steps"].get(step, {}).get(key, 0) for r in group) / n, 1)
                              for key in ("calls", *_KEYS)} for step in STEPS}
            summary[f"{mode}/{route}"] = {
                "investigations": n, "avg_hops": round(statistics.mean(r["hops"] for r in group), 2),
                "avg_calls": round(statistics.mean(r["calls"] for r in group), 2),
                "avg_usd": round(statistics.mean(r["usd"] for r in group), 6),
                "max_usd": round(max(r["usd"] for r in group), 6),
                "fallbacks": sum(r["fallbacks"] for r in group), "by_step": by_step}
    print(json.dumps(summary, indent=2))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.messages_api")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument("--embedder", choices=["minilm", "bow"], default="bow")
    s.add_argument("--min-cache-tokens", type=int, default=1024)
    r = sub.add_parser("report")
    r.add_argument("--home", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.embedder, args.min_cache_tokens)
    else:
        report(args.home)
