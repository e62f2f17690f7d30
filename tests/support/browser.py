"""A real headless Chromium for the browser tests (Debian's chromium + chromedriver, driven by Selenium); the
test is skipped where they are not installed (required in CI, see `require_or_skip`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import require_or_skip

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@contextmanager
def headless_chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A Chromium driver with a `width` x `height` window, no implicit waits; quit on exit."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        require_or_skip("Debian's chromium and chromium-driver are not installed (apt-get install -y "
                        "chromium chromium-driver; .ci/run does it)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--hide-scrollbars", f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
