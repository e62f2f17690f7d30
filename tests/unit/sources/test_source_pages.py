"""The console's knowledge sources section: each source's last sync, escaped."""

from __future__ import annotations

from api.source_pages import sources_section


def test_the_section_shows_each_sources_last_sync() -> None:
    html = sources_section([{"name": "guide", "type": "zendesk-guide", "items": 249, "running": False,
                             "last_finished_at": "2026-12-05T08:00:00.123Z", "last_error": "<b>401</b>",
                             "last_stats": {"added": 1, "updated": 2, "deleted": 3, "skipped": 4}}])
    assert "Knowledge sources (1)" in html and "249" in html and "2026-12-05 08:00:00" in html
    assert "1 added · 2 updated · 3 deleted · 4 skipped" in html
    assert "&lt;b&gt;401&lt;/b&gt;" in html and "failed" in html
    assert "sleuth sources add" in sources_section([])
