"""The compiled heuristics are used only when built from the very sources in the checkout, for this
interpreter; anything else runs the Python source, and says why (investigation/compiled.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from investigation import compiled


def _fake_build(root: Path, *, sources: dict[str, str] | None = None, suffix: str | None = None,
                shared: str = "group__mypyc", files: bool = True) -> Path:
    """A build directory as scripts/compile.py leaves it (empty files stand for the extension modules)."""
    build = root / "mypyc"
    build.mkdir()
    ext = compiled.extension_suffix()
    manifest = {
        "extension_suffix": suffix or ext,
        "mypy": "test",
        "shared": shared,
        "sources": sources if sources is not None else {m: compiled.digest(m) for m in compiled.MODULES},
    }
    (build / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    if files:
        (build / f"{shared}{ext}").write_bytes(b"")
        for module in compiled.MODULES:
            package, name = module.rsplit(".", 1)
            (build / package).mkdir(exist_ok=True)
            (build / package / f"{name}{ext}").write_bytes(b"")
    return build


def test_a_build_of_the_current_sources_for_this_interpreter_is_usable(tmp_path: Path) -> None:
    assert compiled.check(_fake_build(tmp_path)) is None


def test_no_build_runs_the_python_source(tmp_path: Path) -> None:
    assert compiled.check(tmp_path / "absent") == "not built (make compile)"
    status = compiled._decide(tmp_path / "absent", True)
    assert not status.active and "not built" in status.reason


def test_an_edited_source_is_named_and_its_stale_build_not_used(tmp_path: Path) -> None:
    sources = {m: compiled.digest(m) for m in compiled.MODULES}
    sources["heuristic.synthesis"] = "0" * 64  # built from another version of the file
    problem = compiled.check(_fake_build(tmp_path, sources=sources))
    assert problem == "heuristic/synthesis.py changed since the build (make compile)"
    assert not compiled._decide(tmp_path / "mypyc", True).active


@pytest.mark.parametrize("kind", ["suffix", "modules", "files", "garbage"])
def test_a_build_for_another_interpreter_or_module_list_or_incomplete_or_unreadable_is_not_used(
        tmp_path: Path, kind: str) -> None:
    if kind == "suffix":
        build = _fake_build(tmp_path, suffix=".cpython-310-x86_64-linux-gnu.so")
        expected = "built for another interpreter"
    elif kind == "modules":
        build = _fake_build(tmp_path, sources={m: compiled.digest(m) for m in compiled.MODULES[1:]})
        expected = "built for another list of modules"
    elif kind == "files":
        build = _fake_build(tmp_path, files=False)
        expected = "shared library is missing"
    else:
        build = _fake_build(tmp_path)
        (build / compiled.MANIFEST).write_text("{not json", encoding="utf-8")
        expected = "unreadable build manifest"
    problem = compiled.check(build)
    assert problem is not None and expected in problem, problem


def test_one_missing_module_file_makes_the_build_unusable(tmp_path: Path) -> None:
    build = _fake_build(tmp_path)
    (build / "heuristic" / f"focus{compiled.extension_suffix()}").unlink()
    assert compiled.check(build) == "the build lacks heuristic.focus (make compile)"


def test_a_process_not_allowed_the_build_runs_the_source_even_with_a_usable_build(tmp_path: Path) -> None:
    status = compiled._decide(_fake_build(tmp_path), False)
    assert not status.active and status.reason == "Python source (SLEUTH_COMPILED=false)"


def test_the_finder_finds_only_the_compiled_modules_and_only_while_the_build_is_in_use(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled, "_status", compiled.Status(False, "Python source: not built"))
    assert compiled._Finder.find_spec("heuristic.focus") is None
    monkeypatch.setattr(compiled, "_status", compiled.Status(True, "compiled"))
    spec = compiled._Finder.find_spec("heuristic.focus")
    assert spec is not None and spec.origin == str(
        compiled.BUILD / "heuristic" / f"focus{compiled.extension_suffix()}"
    )
    assert compiled._Finder.find_spec("heuristic.vocabulary") is None


def test_forbidding_the_build_once_it_is_loaded_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled, "_status", compiled.Status(True, "compiled"))
    with pytest.raises(RuntimeError, match="imported before the build was chosen"):
        compiled.use(False)
    monkeypatch.setattr(compiled, "_status", compiled.Status(False, "Python source: not built"))
    monkeypatch.setattr(compiled, "_allowed", True)
    compiled.use(False)  # the source runs already: nothing to swap
    assert compiled._allowed is False


def test_every_compiled_module_is_a_python_file_of_the_pure_packages() -> None:
    for module in compiled.MODULES:
        assert module.split(".")[0] in {"investigation", "heuristic"}
        assert compiled.source_path(module).is_file(), module
    # a frozenset subclass: mypyc compiles no such class
    assert "heuristic.vocabulary" not in compiled.MODULES


def test_a_new_heuristic_module_is_compiled_unless_it_says_why_not() -> None:
    """Every module of `heuristic/` is in MODULES but the ones kept as Python on purpose: a new rule module
    left out would run as Python beside a compiled reasoner, unnoticed."""
    kept_python = {"heuristic.__init__", "heuristic.vocabulary", "heuristic.reasoner", "heuristic.reading",
                   "heuristic.regions"}
    heuristic = {f"heuristic.{p.stem}" for p in (compiled.SOURCE_ROOT / "heuristic").glob("*.py")}
    assert sorted(heuristic - kept_python - set(compiled.MODULES)) == []


def test_a_build_whose_library_does_not_load_runs_the_python_source(tmp_path: Path) -> None:
    """Files that pass every check but are no extension module (here: empty) make the source run, not a
    crash."""
    status = compiled._decide(_fake_build(tmp_path, shared="sleuth_test_broken__mypyc"), True)
    assert not status.active and "cannot load" in status.reason, status


# What a fresh interpreter with only `site` on its path runs: the build in use or not, why, where two compiled
# modules came from, and one heuristic's answer.
_PROBE = (
    "import json, investigation.text as t, heuristic.focus as f; from investigation import compiled as c; "
    "print(json.dumps([c.status().active, c.status().reason, t.__file__, f.__file__, "
    "t.words('Les Misérables, 1862!')]))"
)


def _probe(site: Path, cwd: Path) -> list[Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SLEUTH_COMPILED")}
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=cwd, env={**env, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=120, check=True)
    found: list[Any] = json.loads(done.stdout)
    return found


def test_an_installed_copy_of_the_packages_uses_the_build_beside_it(tmp_path: Path) -> None:
    """As the Docker image has it: the packages installed (copied) into site-packages and the build in
    site-packages/build/mypyc. Needs a usable build of this checkout (CI has one: `make install` built it)."""
    if not compiled.status().active:
        pytest.skip(f"no compiled build in use here: {compiled.status().reason}")
    site = tmp_path / "site-packages"
    found = tomllib.loads((compiled.SOURCE_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for pattern in found["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        shutil.copytree(compiled.SOURCE_ROOT / package, site / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(compiled.BUILD, site / "build" / "mypyc")
    active, reason, text_file, focus_file, words = _probe(site, tmp_path)
    assert active, reason
    for path in (text_file, focus_file):
        assert Path(path).is_relative_to(site / "build" / "mypyc") and path.endswith(
            compiled.extension_suffix()
        )
    from investigation.text import words as source_words

    assert words == source_words("Les Misérables, 1862!")
    # The copy edited: its sources no longer match the build, so the copy runs its Python source.
    (site / "investigation" / "text.py").write_text((site / "investigation" / "text.py").read_text() + "\n")
    active, reason, text_file, _, _ = _probe(site, tmp_path)
    assert not active and "investigation/text.py changed since the build" in reason
    assert Path(text_file) == site / "investigation" / "text.py"
