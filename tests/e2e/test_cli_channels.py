"""`sleuth channels` and `sleuth tenants update --allow-host` as an operator uses them: secrets from a named
environment variable or stdin (never a flag value), masked everywhere, encrypted at rest, and the
outbound rules applied to a channel's endpoint."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from tests.support.cli import run_sleuth


def sleuth(home: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full_env.update({"SLEUTH_HOME": str(home), **env})
    return run_sleuth(args, full_env, input=stdin, timeout=120)


def test_channels_add_list_remove_and_allowlist(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert sleuth(home, "tenants", "create", "acme").returncode == 0
    mail = sleuth(
        home,
        "channels",
        "add",
        "mail",
        "--tenant",
        "acme",
        "--type",
        "smtp",
        "--host",
        "smtp.example.com",
        "--port",
        "587",
        "--username",
        "bot",
        "--password-env",
        "SMTP_PW",
        "--starttls",
        "--from",
        "sleuth@example.com",
        "--json",
        SMTP_PW="pw-value-123",
    )
    assert mail.returncode == 0, mail.stderr
    assert json.loads(mail.stdout)["secrets"] == {"password": "********"}
    zd = sleuth(home, "channels", "add", "zd", "--tenant", "acme", "--type", "zendesk", "--subdomain", "acme",
                "--email", "bot@example.com", "--token-env", "-", "--json", stdin="zd-token-456\n")
    assert zd.returncode == 0, zd.stderr
    zd_view = json.loads(zd.stdout)
    assert zd_view["inbound_url"] == f"/v1/hooks/zendesk/{zd_view['id']}"
    assert zd_view["base_url"] == "https://acme.zendesk.com"
    missing = sleuth(
        home,
        "channels",
        "add",
        "x",
        "--tenant",
        "acme",
        "--type",
        "freshdesk",
        "--domain",
        "acme",
        "--api-key-env",
        "NOT_SET_ANYWHERE",
    )
    assert missing.returncode != 0 and "NOT_SET_ANYWHERE" in missing.stderr
    local = ["channels", "add", "local", "--tenant", "acme", "--type", "freshdesk", "--domain", "acme",
             "--api-key-env", "FD", "--base-url", "http://2130706433:8080"]
    refused = sleuth(home, *local, FD="k")
    assert refused.returncode != 0 and "loopback" in refused.stderr
    opened = sleuth(home, "tenants", "update", "acme", "--allow-host", "0x7f.0.0.1", "--json")
    assert json.loads(opened.stdout)["allowed_hosts"] == ["127.0.0.1"]
    assert sleuth(home, *local, FD="k").returncode == 0
    listed = sleuth(home, "channels", "list", "--tenant", "acme", "--json")
    assert sorted(c["name"] for c in json.loads(listed.stdout)) == ["local", "mail", "zd"]
    everything = mail.stdout + zd.stdout + listed.stdout + listed.stderr
    assert "pw-value-123" not in everything and "zd-token-456" not in everything
    with sqlite3.connect(home / "sleuth.db") as db:
        stored = " ".join(str(row) for row in db.execute("SELECT config, secrets FROM channel"))
    assert "pw-value-123" not in stored and "zd-token-456" not in stored
    assert oct((home / "secret.key").stat().st_mode & 0o777) == "0o600"
    assert sleuth(home, "channels", "remove", "mail", "--tenant", "acme").returncode == 0
    listed = sleuth(home, "channels", "list", "--tenant", "acme", "--json")
    assert sorted(c["name"] for c in json.loads(listed.stdout)) == ["local", "zd"]
