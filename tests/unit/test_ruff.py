"""ruff holds over the whole repository (its configured rules: line length, import order, pyflakes), so the
suite fails on a violation as `make lint` does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
