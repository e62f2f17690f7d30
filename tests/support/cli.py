"""`sleuth …` for tests that check what a command does (its output, exit code, the rows it leaves), in a
process of its own forked from a fork server that has imported the libraries every command needs: a command
then costs its own work, not a fresh interpreter's imports. The command gets the test's environment, argv,
stdin, stdout and stderr, and its exit code is the process's, as with `python -m cli.main`.

The start-up of a real `python -m cli.main` stays covered by tests/e2e/test_cli.py (tenants, ingest, ask,
up), which runs the command line as a newcomer does; `TESTS_CLI=fresh` runs every command of these tests
in a new interpreter instead."""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.forkserver
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from multiprocessing.context import ForkServerContext
from pathlib import Path

# Third-party libraries only: the product's own modules are imported in the command's process, after its
# environment is set (the heuristics build is chosen before they load, consoles see the command's streams).
PRELOAD = [
    "sqlalchemy", "sqlalchemy.orm", "sqlmodel", "alembic.command", "alembic.runtime.migration", "pydantic",
    "pydantic_settings", "typer", "rich.console", "rich.table", "httpx", "redis", "kombu", "celery",
    "celery.app.base", "cryptography.fernet", "yaml", "numpy", "psycopg",
]

_context: ForkServerContext | None = None


def _fork_server() -> ForkServerContext:
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        # Stopped and waited for at exit, so that its commands' CPU is counted with this process's children.
        atexit.register(multiprocessing.forkserver._forkserver._stop)  # type: ignore[attr-defined]
        _context = context
    return _context


def _command(args: list[str], env: dict[str, str], stdin: str, stdout: str, stderr: str) -> None:
    """The body of the command's process: its environment and streams, then `sleuth`'s entry point."""
    os.environ.clear()
    os.environ.update(env)
    for fd, path, flags in ((0, stdin, os.O_RDONLY), (1, stdout, os.O_WRONLY), (2, stderr, os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own stdin
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.argv = [str(Path(__file__).resolve().parents[2] / "cli" / "main.py"), *args]
    from cli.main import main

    main()


def run_sleuth(args: Sequence[str], env: Mapping[str, str], *, input: str | None = None,
               timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`sleuth *args` with `env` (the whole environment) and `input` on stdin: its exit code, stdout and
    stderr, as `subprocess.run([python, "-m", "cli.main", *args], capture_output=True, text=True)` gives."""
    argv = list(args)
    if os.environ.get("TESTS_CLI") == "fresh":  # each command in a new interpreter, to compare the two
        return subprocess.run([sys.executable, "-m", "cli.main", *argv], env=dict(env), input=input,
                              capture_output=True, text=True, timeout=timeout, check=False)
    with tempfile.TemporaryDirectory(prefix="sleuth-cli-") as scratch:
        stdin, stdout, stderr = (Path(scratch) / name for name in ("stdin", "stdout", "stderr"))
        stdin.write_text(input or "", encoding="utf-8")
        stdout.touch()
        stderr.touch()
        process = _fork_server().Process(target=_command,
                                         args=(argv, dict(env), str(stdin), str(stdout), str(stderr)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["sleuth", *argv], timeout)
        out, err = stdout.read_text(encoding="utf-8"), stderr.read_text(encoding="utf-8")
        return subprocess.CompletedProcess(["sleuth", *argv], process.exitcode, out, err)
