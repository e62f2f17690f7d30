"""Showing a bench run: a compact console summary, and a self-contained HTML report (tables + inline SVG:
recall by hop, router confusion matrix, hops histogram, stop reasons) a person can take in at a glance."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from cli.bench_charts import _present_routes, svg_bars, svg_confusion
from cli.bench_metrics import summarise

# The charts are drawn in `cli.bench_charts`; `svg_bars` and `svg_confusion` are importable from here too.
__all__ = ["print_summary", "svg_bars", "svg_confusion", "write_report"]

# Issue 4's targets (embedded engines, heuristic provider, k = 10), keyed by dataset folder name.
TARGETS: dict[str, dict[str, tuple[str, float]]] = {
    "hotpotqa": {"recall@5": (">=", 0.93), "recall@10": (">=", 0.97), "all_gold@10": (">=", 0.94),
                 "contains": (">=", 0.75), "route_accuracy": (">=", 0.85)},
    "musique": {"recall@10": (">=", 0.78), "all_gold@10": (">=", 0.50), "route_accuracy": (">=", 0.85)},
    # the two labelled support sets (issue 10): the demo KB (examples/) and the second product (parcelo/)
    "examples": {"contains": (">=", 0.85), "answer_first": (">=", 0.75), "refusal_rate": (">=", 0.90)},
    "parcelo": {"contains": (">=", 0.85), "answer_first": (">=", 0.75), "refusal_rate": (">=", 0.90)},
}
COMMON_TARGETS: dict[str, tuple[str, float]] = {
    "avg_evidence_tokens": ("<=", 1500.0), "over_hop_cap": ("<=", 0.0), "refusal_rate": (">=", 0.80),
    "false_refusal_rate": ("<=", 0.05), "direct_retrieval_calls": ("<=", 0.0), "internal_leaks": ("<=", 0.0),
    "injected_quoted": ("<=", 0.0)}


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) <= 1.0 else f"{value:,.1f}"
    return str(value)


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """The decision report next to recall, for a terminal (stderr)."""
    k = summary["k"]
    dec, ref, health, ans = (
        summary["decisions"],
        summary["refusal"],
        summary["loop_health"],
        summary["answers"],
    )
    console.rule(f"{summary['dataset']} · {summary['mode']} · k={k} · {summary['questions']} questions")
    console.print(f"recall@5 {_fmt(summary['recall@5'])}  recall@{k} {_fmt(summary[f'recall@{k}'])}  "
                  f"all gold@{k} {_fmt(summary[f'all_gold@{k}'])}  by hop {summary[f'recall@{k}_by_hop']}")
    console.print(f"cost: {_fmt(summary['avg_retrieval_calls'])} retrieval calls, "
                  f"{_fmt(summary['avg_evidence_tokens'])} evidence tokens, {_fmt(summary['avg_hops'])} hops "
                  f"(max {summary['max_hops']}, over cap {summary['over_hop_cap']})")
    console.print(f"decisions: route accuracy {_fmt(dec['route_accuracy'])}, decision accuracy "
                  f"{_fmt(dec['decision_accuracy'])} over {dec['labelled']} labelled")
    present = _present_routes(dec["confusion"])
    if present:
        console.print("  expected \\ decided  " + "  ".join(f"{r[:10]:>10}" for r in present))
        for expected in present:
            if expected in dec["confusion"]:
                cells = dec["confusion"][expected]
                console.print(f"  {expected:<19}" + "  ".join(f"{cells.get(r, 0):>10}" for r in present))
    console.print(f"refusal: out-of-corpus {_fmt(ref['refusal_rate'])} of {ref['out_of_corpus_questions']}, "
                  f"false refusals {_fmt(ref['false_refusal_rate'])} of {ref['in_corpus_questions']}, "
                  f"retrieval calls on {ref['direct_questions']} greetings: {ref['direct_retrieval_calls']}")
    console.print(f"loop: stops {health['stop_reasons']}, hops {health['hops_histogram']}, thrash "
                  f"{_fmt(health['thrash_rate'])} of {health['follow_up_hops']} follow-up hops, duplicate "
                  f"evidence {_fmt(health['duplicate_evidence_rate'])}")
    console.print(f"answers ({ans['scored']}): EM {_fmt(ans['exact_match'])}  F1 {_fmt(ans['f1'])}  "
                  f"contains gold {_fmt(ans['contains'])}  answer-first {_fmt(ans.get('answer_first'))}  "
                  f"gold-token recall {_fmt(ans['token_recall'])}")
    aud = summary.get("audience") or {}
    console.print(
        f"audience: internal leaks {aud.get('internal_leaks', 0)} of {aud.get('customer_questions', 0)} "
        f"customer questions, internal citations in agent answers {aud.get('agent_internal_citations', 0)}, "
        f"answers quoting injected text {aud.get('injected_quoted', 0)}"
    )
    if "heuristics" in summary:
        console.print(f"heuristics: {summary['heuristics']}")


# -- the page ---------------------------------------------------------------------------------------


def _target_of(name: str, dataset: str) -> tuple[str, float] | None:
    key = dataset.split()[0].lower()
    return TARGETS.get(key, {}).get(name) or COMMON_TARGETS.get(name)


def _card(label: str, value: Any, target: tuple[str, float] | None = None) -> str:
    verdict = ""
    if target is not None and isinstance(value, int | float):
        op, bound = target
        ok = value >= bound if op == ">=" else value <= bound
        shown = f"{bound:,.0f}" if bound == int(bound) and (bound == 0 or bound > 1) else _fmt(bound)
        verdict = (f'<div class="{"ok" if ok else "miss"}">{"meets" if ok else "misses"} target '
                   f'{op} {shown}</div>')
    return (f'<div class="card"><div class="l">{html.escape(label)}</div>'
            f'<div class="big">{_fmt(value)}</div>{verdict}</div>')


def _by_hop(summary: dict[str, Any], hops: int) -> list[float | None]:
    values = list(summary.get(f"recall@{summary['k']}_by_hop") or [])
    return [values[min(h, len(values) - 1)] if values else None for h in range(hops)]


def write_report(path: Path, summary: dict[str, Any], rows: Sequence[dict[str, Any]],
                 baseline: Sequence[dict[str, Any]] | None = None) -> None:
    """Write the self-contained HTML report of one run (optionally drawn against a baseline run)."""
    k, dataset = summary["k"], summary["dataset"]
    dec, ref, health, ans = (
        summary["decisions"],
        summary["refusal"],
        summary["loop_health"],
        summary["answers"],
    )
    cards = [
        _card("recall@5", summary["recall@5"], _target_of("recall@5", dataset)),
        _card(f"recall@{k}", summary[f"recall@{k}"], _target_of(f"recall@{k}", dataset)),
        _card(f"all gold in top {k}", summary[f"all_gold@{k}"], _target_of(f"all_gold@{k}", dataset)),
        _card("retrieval calls / question", summary["avg_retrieval_calls"]),
        _card(
            "evidence tokens / question",
            summary["avg_evidence_tokens"],
            _target_of("avg_evidence_tokens", dataset),
        ),
        _card("questions over the hop cap", summary["over_hop_cap"], _target_of("over_hop_cap", dataset)),
        _card("route accuracy", dec["route_accuracy"], _target_of("route_accuracy", dataset)),
        _card(
            "out-of-corpus refused",
            ref["refusal_rate"],
            _target_of("refusal_rate", dataset) if ref["out_of_corpus_questions"] else None,
        ),
        _card(
            "false refusals",
            ref["false_refusal_rate"],
            _target_of("false_refusal_rate", dataset) if ref["in_corpus_questions"] else None,
        ),
        _card(
            "retrieval calls on greetings",
            ref["direct_retrieval_calls"],
            _target_of("direct_retrieval_calls", dataset) if ref["direct_questions"] else None,
        ),
        _card("answer contains gold", ans["contains"], _target_of("contains", dataset)),
        _card(
            "answer first (1st sentence has it)", ans.get("answer_first"), _target_of("answer_first", dataset)
        ),
        _card("answer EM / F1", f"{_fmt(ans['exact_match'])} / {_fmt(ans['f1'])}"),
        _card(
            "internal leaks (customer audience)",
            (summary.get("audience") or {}).get("internal_leaks", 0),
            _target_of("internal_leaks", dataset)
            if (summary.get("audience") or {}).get("customer_questions")
            else None,
        ),
        _card(
            "answers quoting injected text",
            (summary.get("audience") or {}).get("injected_quoted", 0),
            _target_of("injected_quoted", dataset),
        ),
    ]
    charts = []
    if summary[f"recall@{k}_by_hop"]:
        base = summarise(baseline, k=k) if baseline else None
        hops = max(len(summary[f"recall@{k}_by_hop"]), len((base or {}).get(f"recall@{k}_by_hop") or []))
        series: list[tuple[str, Sequence[float | None]]] = [
            (f"this run ({summary['mode']})", _by_hop(summary, hops))
        ]
        if base:
            mode = next((r.get("mode") for r in baseline or [] if r.get("mode")), None) or (
                "single-shot" if all(int(r.get("hops") or 0) <= 1 for r in baseline or []) else "baseline")
            series.append((f"baseline ({mode})", _by_hop({**base, "k": k}, hops)))
        target = _target_of(f"recall@{k}", dataset)
        charts.append(
            svg_bars(
                f"recall@{k} of the ranking after each hop",
                [f"hop {h + 1}" for h in range(hops)],
                series,
                maximum=1.0,
                target=target[1] if target else None,
            )
        )
    if dec["confusion"]:
        charts.append(svg_confusion(dec["confusion"]))
    histogram = health["hops_histogram"]
    if histogram:
        charts.append(svg_bars("questions by number of hops", [f"{h} hops" for h in histogram],
                               [("questions", [float(v) for v in histogram.values()])], percent=False))
    stops = health["stop_reasons"]
    if stops:
        charts.append(
            svg_bars(
                "stop reasons",
                list(stops),
                [("questions", [float(v) for v in stops.values()])],
                percent=False,
                width=max(520, 110 * len(stops)),
            )
        )
    facts = [
        (
            "thrash rate (follow-up hops retrieving ≥ 80 % already-seen passages)",
            f"{_fmt(health['thrash_rate'])} of {health['follow_up_hops']} follow-up hops",
        ),
        (
            "duplicate-evidence rate (retrieved passages already seen)",
            _fmt(health["duplicate_evidence_rate"]),
        ),
        (
            "answers: exact match / token F1 / contains a gold answer / gold-token recall",
            (
                f"{_fmt(ans['exact_match'])} / {_fmt(ans['f1'])} / {_fmt(ans['contains'])} / "
                f"{_fmt(ans['token_recall'])}"
                f" over {ans['scored']} answerable questions"
            ),
        ),
        (
            "decision accuracy (refusal counts as out_of_corpus)",
            (f"{_fmt(dec['decision_accuracy'])} over {dec['labelled']} labelled"),
        ),
        ("wall time", f"{summary.get('wall_seconds')} s, executor {summary.get('executor')}"),
    ]
    page = _PAGE.format(
        title=html.escape(f"Sleuth bench — {dataset}"),
        subtitle=html.escape(f"{summary['mode']} · k = {k} · {summary['questions']} questions · "
                             f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}"),
        cards="".join(cards), charts="".join(f'<div class="chart">{c}</div>' for c in charts),
        facts="".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in facts),
        rows=_question_rows(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")


def _question_rows(rows: Sequence[dict[str, Any]], limit: int = 300) -> str:
    """Per-question table, questions that went wrong first."""
    def wrong(r: dict[str, Any]) -> tuple[int, float]:
        bad = (r.get("expected_route") and r["decision"] != r["expected_route"]) or (
            r.get("gold") and r["recall"] < 1
        )
        return (0 if bad else 1, r.get("recall") or 0.0)

    out = []
    for r in sorted(rows, key=wrong)[:limit]:
        scores = r.get("answer_scores") or {}
        ok = r.get("decision") == r.get("expected_route") if r.get("expected_route") else None
        out.append(
            f'<tr class="{"" if ok in (True, None) else "bad"}">'
            f'<td>{html.escape(str(r.get("question", r["id"])))}</td>'
            f"<td>{html.escape(str(r.get('expected_route') or '–'))} → "
            f"{html.escape(str(r.get('decision')))}</td>"
            f"<td>{html.escape(str(r.get('stop_reason')))}</td><td>{r.get('hops')}</td><td>{r.get('retrieval_calls')}</td>"
            f"<td>{_fmt(r.get('recall')) if r.get('gold') else '–'}</td><td>{_fmt(scores.get('f1'))}</td>"
            f'<td class="ans">{html.escape((r.get("answer") or "")[:280])}</td></tr>'
        )
    return "".join(out)


_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style> body{{font:14px/1.45 system-ui,-apple-system,Segoe
UI,Roboto,sans-serif;margin:24px;color:#111827;background:#fff}} h1{{font-size:22px;margin:0}}
.sub{{color:#6b7280;margin:4px 0 18px}} h2{{font-size:16px;margin:26px 0 8px}}
.cards{{display:flex;flex-wrap:wrap;gap:10px}} .card{{border:1px solid #e5e7eb;border-radius:8px;padding:10px
14px;min-width:150px}} .card .l{{color:#6b7280;font-size:12px}} .card .big{{font-size:24px;font-weight:600}}
.ok{{color:#15803d;font-size:12px}} .miss{{color:#b91c1c;font-size:12px}}
.charts{{display:flex;flex-wrap:wrap;gap:18px}} .chart{{border:1px solid
#e5e7eb;border-radius:8px;padding:8px}} svg .t{{font-size:13px;font-weight:600}} svg
.a{{font-size:11px;fill:#374151}} svg .v{{font-size:10px;fill:#111827}} svg
.n{{font-size:14px;font-weight:600;fill:#111827}} svg .grid{{stroke:#e5e7eb}} svg
.target{{stroke:#dc2626;stroke-dasharray:5 4}} table{{border-collapse:collapse;width:100%}}
th,td{{border-bottom:1px solid #e5e7eb;padding:5px 8px;text-align:left;vertical-align:top}} .facts
th{{width:45%;font-weight:500;color:#374151}} tr.bad td{{background:#fef2f2}}
td.ans{{color:#374151;font-size:12px}} </style></head><body> <h1>{title}</h1><div class="sub">{subtitle}</div>
<div class="cards">{cards}</div> <h2>Recall by hop, decisions and loop health</h2><div
class="charts">{charts}</div> <h2>More figures</h2><table class="facts">{facts}</table> <h2>Questions (wrong
decisions and missed gold first)</h2> <table><tr><th>question</th><th>expected →
decided</th><th>stop</th><th>hops</th><th>calls</th><th>recall</th><th>F1</th>
<th>answer</th></tr>{rows}</table> </body></html>
"""
