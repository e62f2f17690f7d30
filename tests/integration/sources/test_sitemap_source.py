"""A docs site from its sitemap, served on 127.0.0.1: main text extracted, robots.txt respected, off-host and
private entries refused per page, unchanged pages (lastmod) not fetched again, removed pages gone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app import source_sync
from app.sources import add_source, get_source
from storage import repositories as repo
from tests.support.stack import Stack

NAV = "<nav><a href='/'>Home</a> <a href='/pricing'>Pricing</a> Menu Menu Menu</nav>"


def _page(title: str, body: str) -> str:
    return (f"<html><head><title>{title}</title></head><body>{NAV}<main><article><h1>{title}</h1>"
            f"<p>{body}</p><p>{body} This paragraph repeats the point so the extractor keeps it.</p>"
            f"</article></main><footer>Copyright Acme footer-text</footer></body></html>")


class DocsSite:
    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, str]] = {}  # path -> (lastmod, html)
        self.extra: list[str] = []  # further <loc>s (off-host, private)
        self.fetched: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.fetched.append(self.path)
                if self.path == "/robots.txt":
                    return self._send(200, "User-agent: *\nDisallow: /private/\n", "text/plain")
                if self.path == "/sitemap.xml":
                    locs = "".join(f"<url><loc>{site.url}{p}</loc><lastmod>{m}</lastmod></url>"
                                   for p, (m, _) in site.pages.items())
                    locs += "".join(f"<url><loc>{loc}</loc></url>" for loc in site.extra)
                    return self._send(200, '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns='
                                      f'"http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>',
                                      "application/xml")
                if self.path in site.pages:
                    return self._send(200, site.pages[self.path][1], "text/html; charset=utf-8")
                self._send(404, "not found", "text/plain")

            def _send(self, status: int, text: str, kind: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture()
def site() -> Iterator[DocsSite]:
    docs = DocsSite()
    yield docs
    docs.server.shutdown()
    docs.server.server_close()


def test_sitemap_pages_are_synced_politely(stack: Stack, site: DocsSite, tmp_path: Path) -> None:
    site.pages["/docs/install"] = (
        "2026-01-01",
        _page("Install", "Install the agent with the marmoset installer."),
    )
    site.pages["/docs/upgrade"] = (
        "2026-01-01",
        _page("Upgrade", "Upgrades run through the capybara channel."),
    )
    site.pages["/private/secret"] = ("2026-01-01", _page("Secret", "The wombat master password lives here."))
    site.extra = ["https://elsewhere.example/docs/x", "http://10.0.0.7/docs/y"]
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
    add_source(
        stack.services,
        tenant=tenant,
        data={"name": "docs", "type": "sitemap", "url": f"{site.url}/sitemap.xml"},
    )
    source = get_source(stack.services, tenant=tenant, name="docs")

    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_error is None, ended.last_error
    assert ended.items == 2 and ended.last_stats["added"] == 2 and ended.last_stats["skipped"] == 3
    assert "/private/secret" not in site.fetched
    bm25 = stack.services.backends["bm25"]
    hit = bm25.search(stack.tenant_id, "marmoset installer", 3)[0]
    assert (
        hit.source_id == f"{source.id}:{site.url}/docs/install@v1" and hit.url == f"{site.url}/docs/install"
    )
    assert "footer-text" not in hit.text and "Menu Menu" not in hit.text
    assert not bm25.search(stack.tenant_id, "wombat master password", 3)

    # Unchanged lastmod: not fetched again. A removed page leaves the engines.
    del site.pages["/docs/upgrade"]
    site.fetched.clear()
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_stats["deleted"] == 1 and ended.last_stats["unchanged"] == 1
    assert "/docs/install" not in site.fetched
    assert not bm25.search(stack.tenant_id, "capybara channel upgrades", 3)
