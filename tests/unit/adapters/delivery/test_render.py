"""Note and e-mail HTML links only http(s): a document's URL is the tenant's data, not markup."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.delivery.render import linkable, render


def _payload(*urls: str | None) -> dict[str, Any]:
    return {
        "status": "answered",
        "answer": "Refunds take five days [1].",
        "question": "How long do refunds take?",
        "citations": [
            {"marker": i + 1, "title": f"Doc {i + 1}", "source_id": f"d{i + 1}", "url": url}
            for i, url in enumerate(urls)
        ],
    }


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.cookie)",
        " JavaScript:alert(1)",
        "jAvAsCrIpT:x",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox",
        "file:///etc/passwd",
        "//evil.example/x",
        "help/refunds",
    ],
)
def test_a_url_that_is_not_http_is_shown_as_text_never_as_a_link(url: str) -> None:
    rendered = render(_payload(url), delivery_id="msg_1", trace_url=url)
    assert "href" not in rendered.html, rendered.html
    assert "Doc 1 — " in rendered.html  # the title, then the URL as (escaped) text
    assert "<script>" not in rendered.html
    assert url in rendered.text  # plain text shows it as it is: nothing there is clickable by itself


def test_http_and_https_urls_are_links() -> None:
    rendered = render(_payload("https://help.example.com/a?x=1&y=\"2\"", "HTTP://help.example.com/b", None),
                      delivery_id="msg_1", trace_url="https://sleuth.example.com/t/1")
    assert '<a href="https://help.example.com/a?x=1&amp;y=&quot;2&quot;">Doc 1</a>' in rendered.html
    assert '<a href="HTTP://help.example.com/b">Doc 2</a>' in rendered.html
    assert '<li value="3">Doc 3</li>' in rendered.html
    assert '<a href="https://sleuth.example.com/t/1">See the trace</a>' in rendered.html


def test_linkable() -> None:
    assert linkable("https://a.example") and linkable("http://a.example")
    assert not any(linkable(u) for u in (None, "", "javascript:x", "mailto:a@b.example", "https//a.example"))


def test_the_three_rating_links_are_in_the_text_and_the_html() -> None:
    links = {r: f"https://sleuth.example.com/r/tok?rating={r}" for r in ("helpful", "partly", "wrong")}
    rendered = render(
        {**_payload(), "feedback_url": "https://sleuth.example.com/r/tok", "feedback_links": links},
        delivery_id="msg_1",
    )
    for rating, label in (("helpful", "Helpful"), ("partly", "Partly"), ("wrong", "Wrong")):
        assert f"{label}: https://sleuth.example.com/r/tok?rating={rating}" in rendered.text
        assert f'<a href="https://sleuth.example.com/r/tok?rating={rating}">{label}</a>' in rendered.html
    assert "rating=" not in render(_payload(), delivery_id="msg_1").text  # no public URL: no links


def test_a_rating_link_that_is_not_http_is_left_out() -> None:
    links = {"helpful": "javascript:alert(1)", "partly": "https://s.example/r/t?rating=partly"}
    rendered = render({**_payload(), "feedback_links": links}, delivery_id="msg_1")
    assert "javascript" not in rendered.html and "javascript" not in rendered.text
    assert "Partly: https://s.example/r/t?rating=partly" in rendered.text
