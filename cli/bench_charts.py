"""The inline SVG charts of the bench report (`cli.bench_report`): bar charts (recall by hop, hops, stop
reasons) and the router's confusion matrix, drawn as text with no library."""

from __future__ import annotations

import html
from collections.abc import Sequence

from cli.bench_metrics import ROUTES

_COLOURS = ("#2563eb", "#9ca3af", "#16a34a", "#d97706", "#dc2626", "#7c3aed")


def _present_routes(confusion: dict[str, dict[str, int]]) -> list[str]:
    used = set(confusion) | {r for row in confusion.values() for r in row}
    return [r for r in ROUTES if r in used] + sorted(used - set(ROUTES))



def svg_bars(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], *,
             maximum: float | None = None, percent: bool = True, target: float | None = None,
             width: int = 520, height: int = 240) -> str:
    """A grouped bar chart: one group per label, one bar per series, values written on the bars."""
    values = [v for _, vs in series for v in vs if v is not None]
    top = maximum or max([*values, target or 0.0, 1e-9])
    if not percent:  # whole-number ticks for counts
        top = float(max(4, -(-int(top) // 4) * 4))
    left, bottom, plot_h = 44, 36, height - 70
    group_w = (width - left - 10) / max(1, len(labels))
    bar_w = min(44.0, (group_w - 12) / max(1, len(series)))
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{html.escape(title)}"><title>{html.escape(title)}</title>'),
             f'<text x="{width / 2}" y="16" text-anchor="middle" class="t">{html.escape(title)}</text>']
    for tick in range(5):
        y = height - bottom - plot_h * tick / 4
        value = top * tick / 4
        label = f"{value * 100:.0f}%" if percent else f"{value:.0f}"
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" class="a">{label}</text>')
    for g, label in enumerate(labels):
        x0 = left + g * group_w + (group_w - bar_w * len(series)) / 2
        for s, (_name, vs) in enumerate(series):
            v = vs[g] if g < len(vs) else None
            if v is None:
                continue
            h = plot_h * v / top if top else 0
            x, y = x0 + s * bar_w, height - bottom - h
            text = f"{v * 100:.1f}" if percent else f"{v:.0f}"
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 3:.1f}" height="{h:.1f}" '
                f'fill="{_COLOURS[s % len(_COLOURS)]}"><title>{html.escape(label)}: {text}</title></rect>'
                f'<text x="{x + (bar_w - 3) / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" '
                f'class="v">{text}</text>'
            )
        parts.append(f'<text x="{left + g * group_w + group_w / 2:.1f}" y="{height - bottom + 16}" '
                     f'text-anchor="middle" class="a">{html.escape(label)}</text>')
    if target is not None:
        y = height - bottom - plot_h * target / top
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}" class="target"/>'
                     f'<text x="{width - 10}" y="{y - 4:.1f}" text-anchor="end" class="a">target '
                     f'{target * 100:.0f}%</text>')
    for s, (name, _vs) in enumerate(series):
        x = left + s * 150
        parts.append(
            f'<rect x="{x}" y="{height - 14}" width="10" height="10" fill="{_COLOURS[s % len(_COLOURS)]}"/>'
            f'<text x="{x + 14}" y="{height - 5}" class="a">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def svg_confusion(confusion: dict[str, dict[str, int]], *, cell: int = 84) -> str:
    """The router confusion matrix as a heat map: rows = expected, columns = decided, shade = row share."""
    columns = _present_routes(confusion)
    routes = [r for r in columns if r in confusion]
    if not routes:
        return "<p>No labelled questions.</p>"
    left, top = 120, 40
    width, height = left + cell * len(columns) + 10, top + cell * len(routes) + 40
    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            'aria-label="router confusion matrix"><title>router confusion matrix</title>'
        ),
        f'<text x="{left + cell * len(columns) / 2}" y="14" text-anchor="middle" class="a">decided →</text>',
    ]
    for j, route in enumerate(columns):
        parts.append(f'<text x="{left + j * cell + cell / 2}" y="{top - 8}" text-anchor="middle" class="a">'
                     f'{html.escape(route)}</text>')
    for i, expected in enumerate(routes):
        row = confusion.get(expected, {})
        total = sum(row.values())
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end" class="a">'
                     f'{html.escape(expected)}</text>')
        for j, decided in enumerate(columns):
            n = row.get(decided, 0)
            share = n / total if total else 0.0
            colour = (f"rgba(22,163,74,{0.12 + 0.8 * share:.2f})" if decided == expected
                      else f"rgba(220,38,38,{0.08 + 0.8 * share:.2f})" if n else "#f9fafb")
            parts.append(
                f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{colour}"><title>expected {expected}, decided {decided}: {n}</title></rect>'
                f'<text x="{left + j * cell + cell / 2 - 1}" y="{top + i * cell + cell / 2 + 5}" '
                f'text-anchor="middle" class="n">{n if n or total else ""}</text>'
            )
    parts.append(f'<text x="12" y="{top + cell * len(routes) / 2}" class="a" transform="rotate(-90 12 '
                 f'{top + cell * len(routes) / 2})" text-anchor="middle">expected</text></svg>')
    return "".join(parts)
