"""Rating links in a real headless Chromium (Debian's chromium + chromedriver, driven by Selenium, launched as
tests/e2e/test_console_browser.py does): the links of an e-mail received by a local aiosmtpd server and of a
note received by a local fake Zendesk record the rating when opened and pressed, and opening alone records
nothing. Then the quality page with data, screenshotted (SLEUTH_DOCS_SCREENSHOTS=1 writes it to
docs/quality-page.png, the picture docs/feedback.md shows), and the knowledge-gaps page used without
script."""

from __future__ import annotations

import html
import os
import random
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import col

from storage import repositories as repo
from storage.models import Investigation, Tenant, utcnow
from tasks.delivery_step import attempt_delivery
from tests.integration.delivery.helpers import add_channel, finished
from tests.support.browser import headless_chromium
from tests.support.helpdesks import ZendeskFake
from tests.support.http import free_port
from tests.support.smtp import SmtpServer
from tests.support.stack import Stack, build_stack

DOCS = Path(__file__).resolve().parents[2] / "docs"
TOKEN = "zd-token-123"


@dataclass
class Site:
    base: str
    stack: Stack
    tenant: Tenant


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture()
def site(tmp_path: Path, redis_url: str, redis_prefix: str, browser: Any) -> Iterator[Site]:
    import uvicorn

    from api.app import create_app

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, public_url=base)
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
    app = create_app(services=stack.services, launcher=lambda _id: None, redeliverer=lambda _id: None)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    browser.delete_all_cookies()
    try:
        yield Site(base, stack, tenant)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _wait(predicate: Callable[[], Any], timeout: float = 45.0, browser: Any = None) -> Any:
    """`predicate()` once it is true; on a loaded host a page may take many seconds, so the bound is wide and
    a miss says where the browser was."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    where = f" (at {browser.current_url}: {browser.page_source[:300]!r})" if browser is not None else ""
    raise AssertionError(f"condition not met in time{where}")


def _sign_in(browser: Any, site: Site, path: str) -> None:
    """Open `path`, sign in on the login page it leads to (typing into the key field itself, not whatever has
    the focus), and wait until `path` is back."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(site.base + path)
    field = _wait(lambda: "/login" in browser.current_url and browser.find_elements(By.ID, "key"),
                  browser=browser)[0]
    field.send_keys(site.stack.api_key + Keys.ENTER)
    _wait(lambda: "/login" not in browser.current_url, browser=browser)


def _ratings(site: Site, inv_id: str) -> list[tuple[str, str, str | None]]:
    with site.stack.services.session() as session:
        return [(f.rater, f.rating, f.comment) for f in repo.list_feedback(session, investigation_id=inv_id)]


def _links(body: str) -> dict[str, str]:
    """rating → the rating link of an HTML body."""
    return {r: html.unescape(u) for u, r in re.findall(r'href="([^"]+/r/[^"]+\?rating=(\w+))"', body)}


def _open_and_press(browser: Any, site: Site, link: str, inv_id: str, comment: str) -> None:
    from selenium.webdriver.common.by import By

    assert link.startswith(site.base + "/r/")
    browser.get(link)
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, 'input[type="submit"]'))
    time.sleep(0.3)
    assert _ratings(site, inv_id) == []  # opened (as a mail scanner would): nothing recorded
    assert not browser.find_elements(By.TAG_NAME, "script")
    browser.find_element(By.ID, "comment").send_keys(comment)
    browser.find_element(By.CSS_SELECTOR, 'input[type="submit"]').click()
    _wait(lambda: "Thank you: recorded as" in browser.page_source)


def test_the_links_of_a_real_email_record_the_rating(browser: Any, site: Site) -> None:
    from email import message_from_bytes, policy

    smtp = SmtpServer()
    try:
        add_channel(
            site.stack.services,
            site.tenant,
            name="mail",
            type="smtp",
            host="127.0.0.1",
            port=smtp.port,
            **{"from": "sleuth@acme.test"},
        )
        inv_id, [delivery_id] = finished(site.stack.services, site.tenant, {
            "type": "email", "channel": "mail", "to": ["agent@acme.test"]})
        assert attempt_delivery(site.stack.services, delivery_id).status == "delivered"
        [mail] = smtp.received
    finally:
        smtp.close()
    message = message_from_bytes(mail.data, policy=policy.default)
    part = message.get_body(("html",))
    assert part is not None
    links = _links(str(part.get_content()))
    assert set(links) == {"helpful", "partly", "wrong"}
    _open_and_press(browser, site, links["wrong"], inv_id, "Business has it <b>too</b>")
    assert _ratings(site, inv_id) == [("email:agent@acme.test", "wrong", "Business has it <b>too</b>")]


def test_the_links_of_a_zendesk_note_record_the_rating(browser: Any, site: Site) -> None:
    desk = ZendeskFake("bot@acme.test", TOKEN, {123})
    try:
        add_channel(site.stack.services, site.tenant, name="desk", type="zendesk", subdomain="acme",
                    email="bot@acme.test", token=TOKEN, base_url=desk.base_url)
        inv_id, [delivery_id] = finished(site.stack.services, site.tenant,
                                         {"type": "zendesk", "channel": "desk", "ticket_id": 123})
        assert attempt_delivery(site.stack.services, delivery_id).status == "delivered"
        [note] = desk.notes[123]
    finally:
        desk.close()
    links = _links(str(note["html_body"]))
    assert set(links) == {"helpful", "partly", "wrong"}
    _open_and_press(browser, site, links["helpful"], inv_id, "Sent as drafted")
    [(rater, rating, comment)] = _ratings(site, inv_id)
    assert (
        rater.startswith("zendesk") and "123" in rater and (rating, comment) == ("helpful", "Sent as drafted")
    )


QUESTIONS = ["How do I export invoices to CSV?", "Which plan includes SSO?", "What does ERR_4021 mean?",
             "Where is our data stored?", "Is there an iOS app?", "How do I rotate an API key?"]


def _seed_quality(site: Site, count: int = 160, seed: int = 11) -> None:
    """`count` finished investigations over the last 8 weeks: mixed routes, audiences, statuses, ratings,
    draft outcomes and latencies (a fixed random seed: the same picture every run)."""
    rng = random.Random(seed)
    services, now = site.stack.services, utcnow()
    for i in range(count):
        status = rng.choices(["answered", "refused", "failed"], [0.78, 0.17, 0.05])[0]
        route = (
            "out_of_corpus"
            if status == "refused"
            else rng.choice(["lookup", "lookup", "multi_part", "multi_hop"])
        )
        created = now - timedelta(days=rng.uniform(0, 56))
        with services.session() as session:
            inv, _ = repo.create_investigation(
                session,
                tenant=site.tenant,
                question=rng.choice(QUESTIONS),
                mode="agentic",
                callback=None,
                budget={},
                idempotency_key=None,
                deadline_seconds=60,
                audience=rng.choice(["agent", "agent", "customer"]),
            )
            repo.update_investigation(session, investigation_id=inv.id, route=route)
            repo.finish_investigation(
                session,
                investigation_id=inv.id,
                status=status,
                stop_reason="sufficient",
                answer="See the plans page [1]." if status == "answered" else None,
            )
            session.execute(update(Investigation).where(col(Investigation.id) == inv.id).values(
                created_at=created, finished_at=created + timedelta(seconds=rng.uniform(2, 25))))
            session.commit()
            if status != "failed" and rng.random() < 0.55:
                rating = rng.choices(["helpful", "partly", "wrong"], [0.68, 0.2, 0.12])[0]
                repo.record_feedback(
                    session,
                    tenant_id=site.tenant.id,
                    investigation_id=inv.id,
                    rater=f"agent:{i}",
                    rating=rating,
                    source=rng.choice(["link", "zendesk_tag"]),
                    now=created,
                )
            if status == "answered" and rng.random() < 0.5:
                draft = rng.choices(["unchanged", "edited", "unused"], [0.5, 0.35, 0.15])[0]
                repo.record_outcome(
                    session,
                    tenant_id=site.tenant.id,
                    investigation_id=inv.id,
                    helpdesk="zendesk",
                    ticket_id=str(1000 + i),
                    draft=draft,
                    reopened=rng.random() < 0.08,
                    edit_ratio=round(rng.uniform(0.1, 0.6), 2) if draft == "edited" else None,
                )


def test_the_quality_page_with_data(browser: Any, site: Site, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    _seed_quality(site)
    with site.stack.services.session() as session:  # a readable name in the picture
        session.execute(update(Tenant).where(col(Tenant.id) == site.tenant.id).values(name="Acme support"))
        session.commit()
    _sign_in(browser, site, "/quality?days=90")
    _wait(lambda: "/quality" in browser.current_url and browser.find_elements(By.TAG_NAME, "svg"),
          browser=browser)
    assert "160" in browser.find_element(By.TAG_NAME, "main").text
    bars = browser.find_elements(By.CSS_SELECTOR, "svg rect")
    assert len(bars) >= 8 * 3  # eight or nine weeks, three statuses each
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1280, min(max(900, height + 200), 2600))
    time.sleep(0.3)
    shot = tmp_path / "quality-page.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("SLEUTH_DOCS_SCREENSHOTS") == "1":
        shutil.copy(shot, DOCS / "quality-page.png")
    browser.set_window_size(1280, 900)


def test_the_gaps_page_in_the_browser(browser: Any, site: Site) -> None:
    """Signed in, the biggest topic first; its investigations unfold without script and lead to their
    trace."""
    from selenium.webdriver.common.by import By

    from tests.integration.app.test_gaps import CSV, seed_gaps

    ids = seed_gaps(site.stack)
    _sign_in(browser, site, "/gaps?days=30")
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "section.gap"), browser=browser)
    first = browser.find_elements(By.CSS_SELECTOR, "section.gap")[0]
    assert first.find_element(By.TAG_NAME, "h2").text in CSV
    assert "4 questions" in first.text and "up from 1 in the 30 days before" in first.text
    assert not browser.find_elements(By.TAG_NAME, "script")
    first.find_element(By.TAG_NAME, "summary").click()
    link = first.find_element(By.CSS_SELECTOR, f'details a[href="/trace/{ids["csv"][0]}"]')
    assert link.is_displayed()
    link.click()
    _wait(lambda: f"/trace/{ids['csv'][0]}" in browser.current_url)
