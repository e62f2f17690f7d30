"""The knowledge sources section of the console's list page: each source's last sync at a glance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def sources_section(sources: Sequence[Mapping[str, Any]]) -> str:
    """A table of sources (type, items, last sync, counts, last error), or a line saying how to add one."""
    if not sources:
        return ('<h2 id="sources">Knowledge sources (0)</h2><p class="muted">No sources: '
                "<code>sleuth sources add NAME --tenant T --type zendesk-guide --channel C</code></p>")
    rows = []
    for s in sources:
        stats = s.get("last_stats") or {}
        counts = " · ".join(f"{stats.get(k, 0)} {k}" for k in ("added", "updated", "deleted", "skipped"))
        when = (s.get("last_finished_at") or "never")[:19].replace("T", " ")
        state = "syncing" if s.get("running") else ("failed" if s.get("last_error") else "ok")
        rows.append(
            "<tr>"
            f'<td data-label="Source">{_e(s["name"])}</td><td data-label="Type">{_e(s["type"])}</td>'
            f'<td data-label="Items">{_e(s["items"])}</td><td data-label="Last sync (UTC)">{_e(when)}</td>'
            f'<td data-label="State"><span class="badge {_e(state)}">{_e(state)}</span></td>'
            f'<td data-label="Counts">{_e(counts)}</td>'
            f'<td data-label="Last error">{_e((s.get("last_error") or "—")[:160])}</td></tr>'
        )
    return (f'<h2 id="sources">Knowledge sources ({len(sources)})</h2>'
            '<table class="stack"><thead><tr><th scope="col">Source</th><th scope="col">Type</th>'
            '<th scope="col">Items</th><th scope="col">Last sync (UTC)</th><th scope="col">State</th>'
            '<th scope="col">Last sync counts</th><th scope="col">Last error</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')
