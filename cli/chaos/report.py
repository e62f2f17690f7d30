"""The chaos results as a console table and as one self-contained HTML page (inline SVG charts)."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from cli.chaos.result import Result

COLOURS = {
    "big": "#d9534f",
    "small": "#0275d8",
    "small (during the burst)": "#0275d8",
    "small (unloaded)": "#5bc0de",
}


def _verdict(result: Result) -> str:
    return "not run" if result.passed is None else ("PASS" if result.passed else "FAIL")


def print_table(results: list[Result], console: Console, *, title: str) -> None:
    table = Table(title=title)
    table.add_column("scenario")
    table.add_column("result")
    table.add_column("figures")
    for r in results:
        figures = "; ".join(f"{k}: {v}" for k, v in r.figures.items())
        style = {"PASS": "green", "FAIL": "red"}.get(_verdict(r), "yellow")
        table.add_row(
            r.name, f"[{style}]{_verdict(r)}[/{style}]", (figures + (f" — {r.note}" if r.note else ""))
        )
    console.print(table)


def _latency_svg(latency: dict[str, list[float]]) -> str:
    """One row of dots per series (intake → terminal seconds) with its p50 and p95 marked. When the values
    span more than 20× (a burst's minutes next to a light tenant's seconds) the axis is logarithmic, so
    both distributions can be read."""
    values = [v for vs in latency.values() for v in vs if v > 0]
    if not values:
        return ""
    width, row, left = 640, 60, 110
    lo, top = min(values) * 0.9, max(values) * 1.05
    log_scale = top / lo > 20

    def x_of(v: float) -> float:
        span = width - left - 10
        if log_scale:
            return left + span * (math.log(max(v, lo)) - math.log(lo)) / (math.log(top) - math.log(lo))
        return left + span * v / top

    height = row * len(latency) + 30
    parts = [f'<svg width="{width}" height="{height + 14}" role="img">']
    for i, (tenant, vs) in enumerate(latency.items()):
        y = 20 + i * row + row / 2
        parts.append(f'<text x="0" y="{y + 4}" font-size="12">{html.escape(tenant)}</text>')
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        for v in vs:
            parts.append(f'<circle cx="{x_of(v):.1f}" cy="{y}" r="3" fill="{COLOURS.get(tenant, "#777")}" '
                         'fill-opacity="0.45"/>')
        ordered = sorted(vs)
        for p in (50, 95) if ordered else ():
            q = ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
            x = x_of(q)
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 14}" y2="{y + 14}" stroke="#222"/>'
                         f'<text x="{x + 3:.1f}" y="{y - 16 + (10 if p == 95 else 0)}" font-size="10">'
                         f'p{p} {q:.1f}s</text>')
    if log_scale:
        ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000) if lo <= t <= top]
        for t in ticks:
            parts.append(
                f'<line x1="{x_of(t):.1f}" x2="{x_of(t):.1f}" y1="{height - 12}" y2="{height - 6}" '
                f'stroke="#999"/><text x="{x_of(t) - 6:.1f}" y="{height + 4}" font-size="10">{t:g}s</text>'
            )
    axis = "log scale" if log_scale else f"0 s … {top:.1f} s"
    parts.append(f'<text x="{left}" y="{height + 14}" font-size="11">{axis} (intake → terminal)</text></svg>')
    return "".join(parts)


def _depth_svg(samples: list[tuple[float, int]], parked: list[tuple[float, int]] | None = None) -> str:
    """Messages waiting in the queues over time (green) and, when given, steps parked by the running-step
    cap of `app.admission_steps` (orange), on one scale."""
    if len(samples) < 2:
        return ""
    width, height, pad = 640, 180, 30
    t_max = max(t for t, _ in [*samples, *(parked or [])]) or 1.0
    d_max = max(d for _, d in [*samples, *(parked or [])]) or 1

    def line(series: list[tuple[float, int]], colour: str) -> str:
        points = " ".join(f"{pad + (width - 2 * pad) * t / t_max:.1f},"
                          f"{height - pad - (height - 2 * pad) * d / d_max:.1f}" for t, d in series)
        return f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'

    legend = ('<text x="200" y="14" font-size="11">messages waiting in the queues'
              + ('</text><text x="420" y="14" font-size="11" fill="#f0ad4e">steps parked (step cap)' if parked
                 else "") + "</text>")
    return (f'<svg width="{width}" height="{height}" role="img">' + line(samples, "#5cb85c")
            + (line(parked, "#f0ad4e") if parked and len(parked) > 1 else "")
            + f'<line x1="{pad}" x2="{width - pad}" y1="{height - pad}" y2="{height - pad}" stroke="#999"/>'
            f'<text x="{pad}" y="{height - 8}" font-size="11">0 s</text>'
            f'<text x="{width - pad - 40}" y="{height - 8}" font-size="11">{t_max:.0f} s</text>'
            f'<text x="2" y="{pad}" font-size="11">{d_max}</text>' + legend + "</svg>")


def write_html(results: list[Result], path: Path, *, title: str, settings: dict[str, str]) -> None:
    rows = []
    for r in results:
        verdict = _verdict(r)
        colour = {"PASS": "#dff0d8", "FAIL": "#f2dede"}.get(verdict, "#fcf8e3")
        figures = "".join(f"<li>{html.escape(str(k))}: <b>{html.escape(str(v))}</b></li>"
                          for k, v in r.figures.items())
        charts = ""
        if r.charts.get("latency"):
            charts += "<h4>Latency per tenant</h4>" + _latency_svg(r.charts["latency"])
        if r.charts.get("depth"):
            charts += "<h4>Queue depth over time</h4>" + _depth_svg(r.charts["depth"], r.charts.get("parked"))
        rows.append(f'<tr style="background:{colour}"><td>{html.escape(r.name)}</td><td><b>{verdict}</b></td>'
                    f'<td><ul>{figures}</ul>{html.escape(r.note)}{charts}</td></tr>')
    knobs = "".join(f"<code>{html.escape(k)}={html.escape(v)}</code> " for k, v in settings.items())
    passed = sum(r.passed is True for r in results)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;width:100%}"
            "td{border:1px solid #ccc;padding:.5em;vertical-align:top}ul{margin:0}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>{passed}/{len(results)} scenarios passed. Stack settings: "
            f"{knobs}</p><table><tr><th>scenario</th><th>result</th><th>figures and charts</th></tr>"
            + "".join(rows) + "</table></body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")


def as_json(results: list[Result]) -> list[dict[str, Any]]:
    return [{"scenario": r.name, "passed": r.passed, "figures": r.figures, "note": r.note} for r in results]
