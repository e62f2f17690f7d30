"""Files under SLEUTH_HOME are private (0600/0700), and in production (SLEUTH_ENV=production) `up`, `api`
and `worker` refuse to start without their keys, or with the encryption key inside SLEUTH_HOME."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.support.cli import run_sleuth

COMMANDS = [["api"], ["worker", "-Q", "plan"], ["up"]]


def sleuth(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full.update(SLEUTH_HOME=str(home), **env)
    return run_sleuth(args, full, timeout=120)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_holds_only_private_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = sleuth(home, "tenants", "create", "acme", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["webhook_secret"].startswith("whsec_")
    assert mode(home) == 0o700
    for path in home.rglob("*"):
        assert mode(path) & 0o077 == 0, f"{path} is {oct(mode(path))}"
    assert mode(home / "sleuth.db") == 0o600 and mode(home / "secret.key") == 0o600


def test_a_home_made_before_is_closed_on_the_next_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert sleuth(home, "tenants", "create", "acme").returncode == 0
    home.chmod(0o755)
    (home / "sleuth.db").chmod(0o644)
    assert sleuth(home, "tenants", "list").returncode == 0
    assert mode(home) == 0o700 and mode(home / "sleuth.db") == 0o600


def test_the_embedded_redis_keeps_its_files_private(tmp_path: Path) -> None:
    """redis-server inherits the umask `sleuth` sets: its folder, log and append-only files are private."""
    home = tmp_path / "home"
    script = (
        "import sys; from pathlib import Path; from cli.processes import make_files_private; "
        "from config.settings import Settings; from workers.embedded_redis import EmbeddedRedis; "
        "home = Path(sys.argv[1]); make_files_private(Settings(home=home)); server = EmbeddedRedis(home); "
        "server.start(); import redis; redis.Redis.from_url(server.url.replace('redis+socket', 'unix'))"
        ".set('k', 'v'); server.stop()"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(home)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    files = list((home / "redis").rglob("*"))
    assert any(p.name.startswith("appendonly") for p in files) and (home / "redis" / "redis.log").exists()
    for path in [home / "redis", *files]:
        assert mode(path) & 0o077 == 0, f"{path} is {oct(mode(path))}"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_production_refuses_to_start_without_the_secret_key(tmp_path: Path, command: list[str]) -> None:
    done = sleuth(tmp_path / "home", *command, SLEUTH_ENV="production", SLEUTH_SESSION_SECRET="s" * 32)
    assert done.returncode == 2 and "SLEUTH_SECRET_KEY" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_production_refuses_a_key_file_inside_the_home(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "key").write_bytes(Fernet.generate_key())
    done = sleuth(home, *command, SLEUTH_ENV="production", SLEUTH_SESSION_SECRET="s" * 32,
                  SLEUTH_SECRET_KEY_FILE=str(home / "key"))
    assert (
        done.returncode == 2
        and "SLEUTH_SECRET_KEY_FILE" in done.stderr
        and "inside SLEUTH_HOME" in done.stderr
    )


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_production_refuses_to_start_without_the_session_secret(tmp_path: Path, command: list[str]) -> None:
    outside = tmp_path / "key"
    outside.write_bytes(Fernet.generate_key())
    done = sleuth(tmp_path / "home", *command, SLEUTH_ENV="production", SLEUTH_SECRET_KEY_FILE=str(outside))
    assert done.returncode == 2 and "SLEUTH_SESSION_SECRET" in done.stderr, done.stderr



@pytest.mark.skipif(os.getuid() != 0, reason="handing the home to another user needs root")
def test_a_home_owned_by_someone_else_is_left_as_it_is(tmp_path: Path) -> None:
    """A volume's mount point belongs to root in k8s (emptyDir + fsGroup): sleuth cannot chmod it, and
    must still start (what it creates inside is private anyway)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    os.chown(home, 12345, 12345)
    done = sleuth(home, "tenants", "create", "acme")
    assert done.returncode == 0, done.stderr
    assert mode(home) == 0o777 and mode(home / "sleuth.db") == 0o600
