"""`SLEUTH_COMPILED` is a setting like any other: read by `Settings`, handed by the entry point to
`investigation.compiled` before the heuristics are imported; `investigation` itself reads no environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.settings import Settings

ROOT = Path(__file__).resolve().parents[3]

# `sleuth --help` through `cli.main.main` (the entry point of every Sleuth process), then a heuristic
# imported: which build runs, and from which file.
_THROUGH_MAIN = (
    "import json, sys; sys.argv = ['sleuth', '--help']; from cli.main import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "import investigation.text as t; from investigation import compiled as c\n"
    "print(json.dumps([c.status().active, c.status().reason, t.__file__, t.words('Les Misérables, 1862!')]))"
)
# The same without the entry point: the environment alone is not read by `investigation.compiled`.
_WITHOUT_MAIN = (
    "import json; import investigation.text as t; from investigation import compiled as c\n"
    "print(json.dumps([c.status().active, c.status().reason, t.__file__]))"
)


def _run(code: str, tmp_path: Path, **env: str) -> list[object]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, "SLEUTH_HOME": str(tmp_path / "home"), **env}, check=True)
    found: list[object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_the_setting_reads_sleuth_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLEUTH_COMPILED", raising=False)
    assert Settings().engines.compiled is True
    monkeypatch.setenv("SLEUTH_COMPILED", "false")
    assert Settings().engines.compiled is False
    assert Settings(compiled=True).engines.compiled is True  # the flat name, as every setting takes
    assert Settings(compiled=False).as_env()["SLEUTH_COMPILED"] == "False"  # handed to child processes


def test_sleuth_compiled_false_runs_the_python_source_through_the_entry_point(tmp_path: Path) -> None:
    active, reason, text_file, words = _run(_THROUGH_MAIN, tmp_path, SLEUTH_COMPILED="false")
    assert not active and reason == "Python source (SLEUTH_COMPILED=false)"
    assert Path(str(text_file)) == ROOT / "investigation" / "text.py"
    assert words == ["les", "miserables", "1862"]


def test_the_environment_alone_decides_nothing_in_the_pure_ring(tmp_path: Path) -> None:
    """Without the entry point the variable is not seen: the reason is never the switch's."""
    _, reason, _ = _run(_WITHOUT_MAIN, tmp_path, SLEUTH_COMPILED="false")
    assert reason != "Python source (SLEUTH_COMPILED=false)"
    assert not any("environ" in line or "getenv" in line
                   for line in (ROOT / "investigation" / "compiled.py").read_text().splitlines())


def test_importing_the_cli_loads_no_compiled_module() -> None:
    """`cli.main` must import no heuristic, or `main()` would choose the build too late."""
    code = ("import sys, cli.main; from investigation import compiled as c; "
            "print([m for m in c.MODULES if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "[]"
