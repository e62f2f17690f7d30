"""The frame of every operator page (header, skip link, stylesheet, headers) and the small pages: login
and the tenant's list of investigations with its dead deliveries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

STATIC = "/static/console"
# Only this server's stylesheet and script; no inline script, no framing, forms post back here only.
HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
        "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
STATUSES = ("queued", "running", "answered", "refused", "failed")
RATINGS = ("helpful", "partly", "wrong")


def e(value: Any) -> str:
    """Escape anything for HTML text and attribute positions."""
    return escape("" if value is None else str(value), quote=True)


def csrf_field(csrf: str | None) -> str:
    """The hidden CSRF token every state-changing form carries (`api.console_auth.csrf_ok` checks it)."""
    return f'<input type="hidden" name="csrf" value="{e(csrf)}">' if csrf else ""


def layout(title: str, body: str, *, signed_in: bool = True, script: bool = False, csrf: str | None = None,
           full: bool = True) -> str:
    """`full`: a full console session (a link's session sees one trace: no list link)."""
    nav = ""
    if signed_in:
        links = '<nav aria-label="Main"><a href="/investigations">Investigations</a></nav>' if full else ""
        nav = (f'{links}<form method="post" action="/logout">{csrf_field(csrf)}'
               '<button type="submit">Sign out</button></form>')
    js = f'<script src="{STATIC}/console.js" defer></script>' if script else ""
    brand = (
        '<a class="brand" href="/investigations">Sleuth</a>' if full else '<span class="brand">Sleuth</span>'
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · Sleuth</title>"
        f'<link rel="stylesheet" href="{STATIC}/console.css">{js}</head><body>'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header class="top">{brand}{nav}</header>'
        f'<main id="main" tabindex="-1">{body}</main></body></html>'
    )


def login_page(next_path: str, error: str | None = None, *, csrf: str | None = None) -> str:
    problem = f'<p class="error" role="alert">{e(error)}</p>' if error else ""
    body = (
        "<h1>Sign in</h1>"
        "<p>Paste your tenant's API key once. It is checked and then forgotten: the browser keeps only a "
        "session cookie for this tenant (HttpOnly, never in a URL), valid until you sign out.</p>"
        f"{problem}"
        '<form method="post" action="/login" class="card">'
        '<label for="key">API key</label>'
        '<input id="key" name="key" type="password" autocomplete="off" required autofocus '
        'spellcheck="false" aria-describedby="key-help">'
        '<p id="key-help" class="muted">The key printed by <code>sleuth tenants create</code> '
        "(starts with <code>sk_</code>). Or run <code>sleuth trace ID</code> for a sign-in link.</p>"
        f'<input type="hidden" name="next" value="{e(next_path)}">{csrf_field(csrf)}'
        '<input type="submit" value="Sign in"></form>'
    )
    return layout("Sign in", body, signed_in=False)


def _short(text: str | None, limit: int = 140) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ratings(ratings: Mapping[str, int] | None) -> str:
    if not ratings:
        return '<span class="muted">—</span>'
    return " ".join(f'<span class="badge rated-{e(r)}">{e(r)}{f" ×{n}" if n > 1 else ""}</span>'
                    for r, n in sorted(ratings.items()))


def list_page(tenant_name: str, rows: Sequence[Mapping[str, Any]], counts: Mapping[str, int],
              dead: Sequence[Mapping[str, Any]], *, status: str | None, notice: str | None = None,
              csrf: str | None = None, extra: str = "", rating: str | None = None,
              rated: Mapping[str, int] | None = None) -> str:
    """Recent investigations with status and rating filters, then dead deliveries with a redeliver button
    each, then `extra` (the knowledge sources section, already rendered). A row's "ratings" are its current
    ratings, e.g. {"wrong": 1}."""
    filters = ['<li><a href="/investigations"' + (' aria-current="page"' if not status and not rating else "")
               + f">All ({sum(counts.values())})</a></li>"]
    for name in STATUSES:
        current = ' aria-current="page"' if status == name else ""
        filters.append(
            f'<li><a href="/investigations?status={name}"{current}>{name} ({counts.get(name, 0)})</a></li>'
        )
    for name in RATINGS:
        current = ' aria-current="page"' if rating == name else ""
        filters.append(f'<li><a href="/investigations?rating={name}"{current}>rated {name} '
                       f"({(rated or {}).get(name, 0)})</a></li>")
    if rows:
        body_rows = "".join(
            "<tr>"
            f'<td data-label="When">{e(r["created_at"])}</td>'
            f'<td data-label="Status"><span class="badge {e(r["status"])}">{e(r["status"])}</span></td>'
            '<td data-label="Question"><a '
            f'href="/trace/{quote(str(r["id"]))}">{e(_short(r["question"]))}</a></td>'
            f'<td data-label="Route">{e(r["route"] or "—")}</td>'
            f'<td data-label="Stopped">{e(r["stop_reason"] or "—")}</td>'
            f'<td data-label="Hops">{e(r["hops"])}</td>'
            f'<td data-label="Rating">{_ratings(r.get("ratings"))}</td>'
            "</tr>"
            for r in rows
        )
        table = (
            '<table class="stack"><thead><tr><th scope="col">When (UTC)</th><th scope="col">Status</th>'
            '<th scope="col">Question</th><th scope="col">Route</th><th scope="col">Stopped</th>'
            '<th scope="col">Hops</th><th '
            f'scope="col">Rating</th></tr></thead><tbody>{body_rows}</tbody></table>'
        )
    else:
        table = '<p class="muted">No investigations here yet.</p>'
    if dead:
        items = "".join(
            "<tr>"
            f'<td data-label="Delivery"><code>{e(d["id"])}</code></td>'
            f'<td data-label="Channel">{e(d["channel"])}</td>'
            f'<td data-label="Investigation"><a href="/trace/{quote(str(d["investigation_id"]))}">'
            f"{e(str(d['investigation_id'])[:12])}…</a></td>"
            f'<td data-label="Attempts">{e(d["attempts"])}</td>'
            f'<td data-label="Last error">{e(_short(d["last_error"], 100))}</td>'
            '<td><form method="post" '
            f'action="/console/deliveries/{quote(str(d["id"]))}/redeliver">{csrf_field(csrf)}'
            f'<button class="action" type="submit" aria-label="Redeliver {e(d["id"])}">Redeliver</button>'
            "</form></td></tr>"
            for d in dead
        )
        dead_html = (
            '<table class="stack"><thead><tr><th scope="col">Delivery</th><th scope="col">Channel</th>'
            '<th scope="col">Investigation</th><th scope="col">Attempts</th><th scope="col">Last error</th>'
            '<th scope="col"><span '
            f'class="muted">Action</span></th></tr></thead><tbody>{items}</tbody></table>'
        )
    else:
        dead_html = '<p class="muted">No dead deliveries.</p>'
    flash = f'<p class="notice" role="status">{e(notice)}</p>' if notice else ""
    body = (
        f"<h1>Investigations of {e(tenant_name)}</h1>{flash}"
        f'<nav aria-label="Filter by status"><ul class="filters">{"".join(filters)}</ul></nav>'
        f"{table}"
        f'<h2 id="dead">Dead deliveries ({len(dead)})</h2>'
        "<p class=muted>Every attempt failed; the receiver gets the same delivery id again on redelivery.</p>"
        f"{dead_html}{extra}"
    )
    return layout("Investigations", body, csrf=csrf)
