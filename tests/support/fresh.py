"""A Python script run in a fresh interpreter at the repository root: what a process-wide setting or a fork
needs (never the test runner's own process, whose after-fork handlers would touch other tests' state)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_script(code: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run `code` with `args`; its standard output. Fails the test, with the script's stderr, unless it
    exits 0."""
    result = subprocess.run([sys.executable, "-c", code, *args], check=False, capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout
