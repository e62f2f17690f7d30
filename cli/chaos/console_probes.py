"""The operator console's probes of the tenant-isolation scenario, against the real stack: a `sleuth trace`
link works once, reaches only its own investigation, read-only, and never reaches the log; sign-in and
sign-out refuse cross-site and tokenless posts; signing out ends the session."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx

from cli.chaos.harness import Harness

EVIL = {"origin": "http://evil.example", "sec-fetch-site": "cross-site"}
COOKIE = "sleuth_session"


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    return found.group(1) if found else ""


def _to_login(response: httpx.Response) -> bool:
    return response.status_code == 303 and response.headers.get("location", "").startswith("/login")


def console_probes(h: Harness, mine: str) -> tuple[int, list[str]]:
    """(probes run, failed probes) for tenant big's investigation `mine`."""
    failed: list[str] = []
    other = h.submit("big", "Good morning!")
    printed = subprocess.run([sys.executable, "-m", "cli.main", "trace", mine, "--base-url", h.base],
                             env=h.env(), capture_output=True, text=True, timeout=120, check=False)
    link = printed.stdout.strip()
    with (
        httpx.Client(base_url=h.base, timeout=30) as browser,
        httpx.Client(base_url=h.base, timeout=30) as thief,
    ):
        opened = browser.get(link, follow_redirects=False)
        if opened.status_code != 303 or browser.get(f"/trace/{mine}").status_code != 200:
            said = (printed.stderr.strip().splitlines() or [""])[-1][:160]
            failed.append(f"link does not open its trace ({opened.status_code}; {said})")
        if thief.get(link, follow_redirects=False).status_code != 401:
            failed.append("link reused")
        if not _to_login(browser.get(f"/trace/{other}", follow_redirects=False)):
            failed.append("link session opens another investigation")
        if not _to_login(browser.get("/investigations", follow_redirects=False)):
            failed.append("link session opens the list")
        token = link.rsplit("/", 1)[-1]
        if token and h.log_path and token in h.log_path.read_text(errors="replace"):
            failed.append("link token in the log")
    with httpx.Client(base_url=h.base, timeout=30) as victim:
        key = h.tenants["small"].key
        if COOKIE in victim.post("/login", data={"key": key}, follow_redirects=False).headers.get(
            "set-cookie", ""
        ):
            failed.append("login without its form token")
        form = _csrf(victim.get("/login").text)
        cross = victim.post("/login", data={"key": key, "csrf": form}, headers=EVIL, follow_redirects=False)
        if cross.status_code != 403 or COOKIE in cross.headers.get("set-cookie", ""):
            failed.append("cross-site login")
        signed_in = victim.post("/login", data={"key": key, "csrf": form}, follow_redirects=False)
        page = victim.get("/investigations")
        if signed_in.status_code != 303 or page.status_code != 200:
            failed.append(
                f"sign-in from the form does not work ({signed_in.status_code}, {page.status_code})"
            )
        session_id = victim.cookies.get(COOKIE)
        if victim.post("/logout", data={"csrf": _csrf(page.text)}, headers=EVIL,
                       follow_redirects=False).status_code != 403:
            failed.append("cross-site logout")
        victim.post("/logout", data={"csrf": _csrf(page.text)}, follow_redirects=False)
        victim.cookies.set(COOKIE, session_id or "")
        if not _to_login(victim.get("/investigations", follow_redirects=False)):
            failed.append("session alive after logout")
    return 10, failed
