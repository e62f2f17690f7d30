"""The heuristics compiled with mypyc, used in place of their Python source when a build of that very source
is there.

The loop's time is mostly Python holding the GIL, much of it the heuristic reasoner's per-question text
work. `MODULES` are compiled to C extension modules by mypyc
(`make install` does it, `make compile` again; scripts/compile.py) into build/mypyc/ beside the packages,
with a manifest of the source they were built from. At import, `investigation/__init__.py` and
`heuristic/__init__.py` put their build directory first on their `__path__` (`extend`) only when every
compiled module's source is byte for byte the one in the manifest and the build is for this interpreter:
an edited source runs as Python until the next build, never as a stale extension. The same code either way,
so the same results (the bench equality test compares the two); what changes is only how fast it runs, and
that a profiler sees no Python frames inside a compiled function.

`SLEUTH_COMPILED=false` runs the Python source (read here, at import: before settings exist); `status()`
says which is in use and why (`sleuth bench` prints it).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What is compiled: pure functions of text and evidence, no I/O. `heuristic.vocabulary` stays Python (a
# frozenset subclass, which mypyc does not compile); so do this module and the packages' `__init__`.
MODULES = (
    "investigation.text",
    "heuristic.chains",
    "heuristic.compression",
    "heuristic.focus",
    "heuristic.grader",
    "heuristic.kinds",
    "heuristic.lead",
    "heuristic.mentions",
    "heuristic.pick_scoring",
    "heuristic.planner",
    "heuristic.premises",
    "heuristic.prose",
    "heuristic.router",
    "heuristic.selection",
    "heuristic.social",
    "heuristic.sufficiency",
    "heuristic.synthesis",
    "heuristic.verdicts",
)
SOURCE_ROOT = Path(__file__).resolve().parents[1]
BUILD = SOURCE_ROOT / "build" / "mypyc"
MANIFEST = "manifest.json"
OFF_VALUES = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Status:
    active: bool
    reason: str  # "compiled (mypyc …)", or why the Python source runs


_status: Status | None = None


def source_path(module: str) -> Path:
    return SOURCE_ROOT.joinpath(*module.split(".")).with_suffix(".py")


def digest(module: str) -> str:
    return hashlib.sha256(source_path(module).read_bytes()).hexdigest()


def extension_suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def status() -> Status:
    """Whether the compiled modules are in use in this process (decided once, at the first import)."""
    global _status
    if _status is None:
        _status = _decide(BUILD, os.environ.get("SLEUTH_COMPILED", ""))
    return _status


def extend(package: str, path: list[str]) -> list[str]:
    """`package`'s `__path__`, with its compiled modules' directory first when the build is in use."""
    if not status().active:
        return path
    return [str(BUILD / package), *path]


def check(build: Path) -> str | None:
    """Why the build in `build` cannot be used for the current sources, or None when it can."""
    return _read(build)[1]


def _read(build: Path) -> tuple[dict[str, Any], str | None]:
    """The build's manifest, and why the build cannot be used (None when it can)."""
    try:
        manifest = json.loads((build / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, "not built (make compile)"
    except (OSError, ValueError) as exc:
        return {}, f"unreadable build manifest: {exc}"
    if not isinstance(manifest, dict):
        return {}, "unreadable build manifest"
    if manifest.get("extension_suffix") != extension_suffix():
        return manifest, f"built for another interpreter ({manifest.get('extension_suffix')}; make compile)"
    sources = manifest.get("sources")
    if not isinstance(sources, dict) or set(sources) != set(MODULES):
        return manifest, "built for another list of modules (make compile)"
    for module in MODULES:
        try:
            current = digest(module)
        except OSError as exc:
            return manifest, f"cannot read {source_path(module)}: {exc}"
        if sources[module] != current:
            return (
                manifest,
                f"{source_path(module).relative_to(SOURCE_ROOT)} changed since the build (make compile)",
            )
    shared = manifest.get("shared")
    if not isinstance(shared, str) or not _extension(build, shared).is_file():
        return manifest, "the build's shared library is missing (make compile)"
    missing = [module for module in MODULES if not _extension(build, module).is_file()]
    if missing:
        return manifest, f"the build lacks {', '.join(missing)} (make compile)"
    return manifest, None


def _extension(build: Path, module: str) -> Path:
    """Where the build holds `module` ("heuristic.focus" → build/heuristic/focus.cpython-…so)."""
    *package, name = module.split(".")
    return build.joinpath(*package, f"{name}{extension_suffix()}")


def _decide(build: Path, switch: str) -> Status:
    if switch.strip().lower() in OFF_VALUES:
        return Status(False, f"Python source (SLEUTH_COMPILED={switch})")
    manifest, problem = _read(build)
    if problem is not None:
        return Status(False, f"Python source: {problem}")
    shared = str(manifest["shared"])
    if shared not in sys.modules:  # the group's code, which every compiled module's own file imports by name
        location = _extension(build, shared)
        spec = importlib.util.spec_from_file_location(shared, location)
        if spec is None or spec.loader is None:
            return Status(False, f"Python source: cannot load {location}")
        try:  # an extension module is loaded as it is created, then initialised
            library = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(library)
        except ImportError as exc:  # not a loadable library (e.g. built against another build of this Python)
            return Status(False, f"Python source: cannot load {location}: {exc}")
        sys.modules[shared] = library
    return Status(True, f"compiled (mypyc {manifest.get('mypy', '?')}, {len(MODULES)} modules)")
