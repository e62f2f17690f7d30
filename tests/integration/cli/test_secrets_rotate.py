"""`sleuth secrets rotate`: every stored secret (webhook signing secrets, channel secrets, tool secrets)
re-encrypted under the new key in one go; afterwards the new key alone reads them and the old one none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from sqlalchemy import text

from bootstrap import Services
from config.settings import Settings
from storage import repositories as repo
from storage.secrets import KEY_FILE, NEXT_KEY_FILE, SecretBox, SecretKeyError, rotate_stored_secrets
from tests.support.cli import run_sleuth


def sleuth(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full.update(SLEUTH_HOME=str(home), **env)
    return run_sleuth(args, full, timeout=120)


def store_secrets(settings: Settings) -> tuple[str, str, str]:
    """A tenant, a channel and a tool, sealed under `settings`' key: their clear secrets."""
    services = Services(settings)
    box = services.secret_box()
    with services.session() as session:
        tenant, _ = repo.create_tenant(session, name="acme", box=box)
        repo.create_channel(session, tenant_id=tenant.id, name="mail", type="smtp", config={},
                            secrets={"password": "hunter2"}, box=box)
        repo.put_tool(session, tenant_id=tenant.id, name="billing", declaration={},
                      sealed_secret=box.seal({"secret": "tok_123"}))
        clear = repo.open_webhook_secret(tenant, box)
    services.engine.dispose()
    return clear, "hunter2", "tok_123"


def stored_tokens(home: Path) -> list[str]:
    services = Services(Settings(home=home, secret_key=SecretStr(Fernet.generate_key().decode())))
    with services.session() as session:
        rows = session.connection().execute(text(
            "SELECT webhook_secret FROM tenant UNION ALL SELECT secrets FROM channel "
            "UNION ALL SELECT secret FROM tool")).scalars().all()
    services.engine.dispose()
    assert len(rows) == 3
    return list(rows)


def read_all(tokens: list[str], box: SecretBox) -> tuple[str, str, str]:
    webhook, channel, tool = tokens
    return box.open_text(webhook), box.open(channel)["password"], box.open(tool)["secret"]


def assert_only_new_key_reads(tokens: list[str], new: bytes, old: bytes, clear: tuple[str, str, str]) -> None:
    assert read_all(tokens, SecretBox(new)) == clear
    for token in tokens:
        with pytest.raises(SecretKeyError):
            SecretBox(old).open_text(token)


def test_rotating_the_configured_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old, new = Fernet.generate_key(), Fernet.generate_key()
    clear = store_secrets(Settings(home=home, secret_key=SecretStr(old.decode())))
    done = sleuth(home, "secrets", "rotate", "--json", SLEUTH_SECRET_KEY=new.decode(),
                  SLEUTH_SECRET_KEY_PREVIOUS=old.decode())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"tenant": 1, "channel": 1, "tool": 1}'
    assert_only_new_key_reads(stored_tokens(home), new, old, clear)


def test_rotating_without_the_old_key_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = Fernet.generate_key()
    clear = store_secrets(Settings(home=home, secret_key=SecretStr(old.decode())))
    done = sleuth(home, "secrets", "rotate", SLEUTH_SECRET_KEY=Fernet.generate_key().decode())
    assert done.returncode == 2 and "cannot be decrypted" in done.stderr and "Traceback" not in done.stderr
    assert read_all(stored_tokens(home), SecretBox(old)) == clear


def test_rotating_the_embedded_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    clear = store_secrets(Settings(home=home))
    old = (home / KEY_FILE).read_bytes().strip()
    done = sleuth(home, "secrets", "rotate")
    assert done.returncode == 0, done.stderr
    new = (home / KEY_FILE).read_bytes().strip()
    assert new != old and not (home / NEXT_KEY_FILE).exists()
    assert_only_new_key_reads(stored_tokens(home), new, old, clear)


def test_an_embedded_rotation_cut_short_is_finished_by_the_next_one(tmp_path: Path) -> None:
    """The next key was written and the secrets re-encrypted, but the process died before the rename:
    everything stays readable meanwhile, and the next rotation completes with that same key."""
    home = tmp_path / "home"
    clear = store_secrets(Settings(home=home))
    old, following = (home / KEY_FILE).read_bytes().strip(), Fernet.generate_key()
    (home / NEXT_KEY_FILE).write_bytes(following)
    services = Services(Settings(home=home))
    with services.session() as session:
        rotate_stored_secrets(session, SecretBox(following, old))
    assert read_all(stored_tokens(home), services.secret_box()) == clear  # both keys read meanwhile
    services.engine.dispose()
    assert sleuth(home, "secrets", "rotate").returncode == 0
    assert (home / KEY_FILE).read_bytes().strip() == following
    assert_only_new_key_reads(stored_tokens(home), following, old, clear)


def test_generate_key_prints_a_fernet_key(tmp_path: Path) -> None:
    done = sleuth(tmp_path / "home", "secrets", "generate-key")
    assert done.returncode == 0 and Fernet(done.stdout.strip().encode())
