"""The operator pages in a real headless Chromium (Debian's chromium + chromedriver, driven by Selenium):
sign in without a key in the URL, the trace summary at desktop and phone widths (no horizontal scroll,
key elements present, details collapsed), keyboard-only use of the list page's redeliver button (its
form's CSRF token travels with it), live updates over Server-Sent Events while an investigation runs, and
a sign-in link that opens its trace once, with sign-out ending the session."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.api.conftest import Recorder
from tests.support.browser import headless_chromium
from tests.support.http import free_port
from tests.support.stack import Stack, build_stack

DESKTOP, PHONE = (1280, 900), (390, 844)


@dataclass
class Console:
    base: str
    stack: Stack
    redeliverer: Recorder
    launched: list[str]
    shots: Path

    def ask(self, question: str, *, run: bool = True, callback: dict[str, Any] | None = None) -> str:
        from cli.commands import create_and_launch
        from tasks import inline

        services = self.stack.services
        launch: Callable[[str], None] = (lambda i: inline.run(services, i)) if run else self.launched.append
        return create_and_launch(
            services, self.stack.tenant_name, question, "agentic", callback, launch=launch
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with headless_chromium(*DESKTOP) as driver:
        yield driver


@pytest.fixture()
def console(tmp_path: Path, redis_url: str, redis_prefix: str, browser: Any) -> Iterator[Console]:
    import uvicorn

    from api.app import create_app

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, webhook_allow_private=True)
    redeliverer = Recorder()
    launched: list[str] = []
    app = create_app(services=stack.services, launcher=launched.append, redeliverer=redeliverer)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    browser.delete_all_cookies()
    shots = Path(tmp_path / "screenshots")
    shots.mkdir()
    try:
        yield Console(f"http://127.0.0.1:{port}", stack, redeliverer, launched, shots)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        keep = Path(__file__).resolve().parents[2] / ".sleuth-screenshots"
        if keep.parent.joinpath("Makefile").exists():
            keep.mkdir(exist_ok=True)
            for png in shots.glob("*.png"):
                shutil.copy(png, keep / png.name)


def _wait(predicate: Callable[[], Any], timeout: float = 45.0) -> Any:
    """`predicate()` once it is true; on a loaded host a page may take many seconds, so the bound is wide."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def _sign_in(driver: Any, console: Console, path: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get(console.base + path)
    _wait(lambda: "/login" in driver.current_url)
    def focused_key() -> Any:  # autofocus: the key field, no mouse needed (once the page has loaded)
        active = driver.switch_to.active_element
        return active if active.get_attribute("id") == "key" else None

    field = _wait(focused_key)
    field.send_keys(console.stack.api_key + Keys.ENTER)
    _wait(lambda: driver.current_url.endswith(path))
    assert console.stack.api_key not in driver.current_url
    cookie = driver.get_cookie("sleuth_session")
    assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert driver.execute_script("return document.cookie") == ""  # no script can read it
    assert driver.find_elements(By.TAG_NAME, "main")


def _fits(driver: Any, size: tuple[int, int], name: str, console: Console) -> None:
    driver.set_window_size(*size)
    time.sleep(0.2)
    width = driver.execute_script("return document.documentElement.clientWidth")
    scroll = driver.execute_script("return document.documentElement.scrollWidth")
    driver.save_screenshot(str(console.shots / f"{name}-{size[0]}.png"))
    assert scroll <= width, f"{name} at {size[0]}px scrolls sideways ({scroll} > {width})"


def test_trace_summary_at_desktop_and_phone_widths(browser: Any, console: Console) -> None:
    from selenium.webdriver.common.by import By

    inv_id = console.ask("Which plan includes SCIM provisioning, and where is its data stored?")
    _sign_in(browser, console, f"/trace/{inv_id}")
    for size, name in ((DESKTOP, "trace-desktop"), (PHONE, "trace-phone")):
        _fits(browser, size, name, console)
        summary = browser.find_element(By.ID, "summary")
        assert summary.is_displayed()
        text = summary.text
        for needed in ("Why it stopped", "Where each citation comes from", "What was searched",
                       "What was missing"):
            assert needed in text, needed
        assert browser.find_element(By.CSS_SELECTOR, "#summary .answer").text.strip()
        assert browser.find_elements(By.CSS_SELECTOR, "#summary .sources li")
        assert browser.find_elements(By.CSS_SELECTOR, "#summary table tbody tr")
    browser.set_window_size(*DESKTOP)
    # The summary starts within the first screen; every detail section starts collapsed.
    top = browser.execute_script("return document.getElementById('summary').getBoundingClientRect().top")
    assert top < DESKTOP[1] / 2
    details = browser.find_elements(By.TAG_NAME, "details")
    assert len(details) >= 3 and not any(d.get_attribute("open") for d in details)
    # A citation marker leads to where it came from.
    browser.find_element(By.CSS_SELECTOR, "#summary .answer a").click()
    assert browser.execute_script("return location.hash").startswith("#cite-")


def test_list_page_filters_and_keyboard_redeliver(browser: Any, console: Console) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from storage import repositories as repo

    dead_inv = console.ask(
        "What does ERR_4021 mean?", callback={"type": "webhook", "url": "http://127.0.0.1:9/x"}
    )
    console.ask("Good morning!")
    with console.stack.services.session() as db:
        delivery_id = repo.list_deliveries(db, investigation_id=dead_inv)[0].id
        repo.mark_delivery(db, delivery_id=delivery_id, status="dead", error="connection refused")
    _sign_in(browser, console, "/investigations")
    for size, name in ((DESKTOP, "list-desktop"), (PHONE, "list-phone")):
        _fits(browser, size, name, console)
        assert "What does ERR_4021 mean?" in browser.page_source and delivery_id in browser.page_source
    browser.set_window_size(*DESKTOP)
    # Keyboard only: the first Tab reaches the skip link, later ones the filters, then the button.
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    seen: list[str] = []
    for _ in range(40):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        active = browser.switch_to.active_element
        seen.append(active.text or active.get_attribute("aria-label") or "")
        if active.tag_name == "button" and active.text == "Redeliver":
            break
    else:
        raise AssertionError(f"Tab never reached the Redeliver button: {seen}")
    assert any(s.startswith("failed") for s in seen) or any("answered" in s for s in seen), seen
    active.send_keys(Keys.ENTER)
    _wait(lambda: "queued again" in browser.page_source)
    assert console.redeliverer.calls == [delivery_id]
    # Filters narrow the list.
    browser.get(console.base + "/investigations?status=answered")
    assert "Good morning!" in browser.page_source


def test_running_investigation_updates_live_then_shows_the_summary(browser: Any, console: Console) -> None:
    from selenium.webdriver.common.by import By

    from tasks import inline

    inv_id = console.ask("Which plan includes SCIM provisioning?", run=False)
    _sign_in(browser, console, f"/trace/{inv_id}")
    assert browser.find_element(By.ID, "live-status").is_displayed()
    browser.save_screenshot(str(console.shots / "trace-running-1280.png"))
    threading.Thread(target=inline.run, args=(console.stack.services, inv_id), daemon=True).start()
    # Either the live list shows steps or the page already reloaded with the answer.
    _wait(lambda: browser.execute_script(
        "var l=document.getElementById('live-events');"
        "return (l && l.children.length > 0) || !document.getElementById('live-status');"))
    _wait(lambda: not browser.find_elements(By.ID, "live-status"), timeout=30)
    assert browser.find_element(By.CSS_SELECTOR, "#summary .answer").text.strip()
    assert "answered" in browser.find_element(By.CSS_SELECTOR, "#summary .badge").text


def test_a_link_opens_its_trace_once_and_sign_out_ends_the_session(browser: Any, console: Console) -> None:
    from selenium.webdriver.common.by import By

    from api import session
    from storage import repositories as repo

    inv_id = console.ask("Which plan includes SCIM provisioning?")
    with console.stack.services.session() as db:
        tenant = repo.get_tenant_by_name(db, name=console.stack.tenant_name)
        token = session.link_token(console.stack.settings, tenant.id, tenant.api_key_hash, inv_id)
    link = f"{console.base}/link/{token}"
    browser.get(link)
    _wait(lambda: browser.current_url.endswith(f"/trace/{inv_id}"))
    assert not browser.find_elements(By.CSS_SELECTOR, 'a[href="/investigations"]')  # this trace only
    old = browser.get_cookie("sleuth_session")["value"]
    browser.find_element(By.CSS_SELECTOR, 'form[action="/logout"] button').click()  # a real form post
    _wait(lambda: "/login" in browser.current_url)
    browser.get(link)
    assert "already used" in browser.page_source
    browser.add_cookie({"name": "sleuth_session", "value": old, "path": "/"})  # a copy of the old cookie
    browser.get(f"{console.base}/trace/{inv_id}")
    _wait(lambda: "/login" in browser.current_url)
