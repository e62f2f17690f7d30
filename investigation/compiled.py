"""The heuristics compiled with mypyc, used in place of their Python source when a build of that very source
is there.

The loop's time is mostly Python holding the GIL, much of it the heuristic reasoner's per-question text
work. `MODULES` are compiled to C extension modules by mypyc
(`make install` does it, `make compile` again; scripts/compile.py) into build/mypyc/ beside the packages,
with a manifest of the source they were built from. `investigation/__init__.py` and `heuristic/__init__.py`
install a finder (`install`) that, at the first import of one of `MODULES`, decides once for the process:
the build is used only when every compiled module's source is byte for byte the one in the manifest and the
build is for this interpreter: an edited source runs as Python until the next build, never as a stale
extension. The same code either way, so the same results (the bench equality test compares the two); what
changes is only how fast it runs, and that a profiler sees no Python frames inside a compiled function.

The process's entry point says whether the build may be used (`use`, from the `compiled` setting,
`SLEUTH_COMPILED`; `cli.main.main`) before it imports the heuristics; without a word, the build is
used when it can be. `status()` says which is in use and why (`sleuth bench` prints it).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

# What is compiled: pure functions of text and evidence, no I/O. `heuristic.vocabulary` stays Python (a
# frozenset subclass, which mypyc does not compile); so do this module, the packages' `__init__`, the
# reasoner's glue (`heuristic.reasoner`: numpy and the embedder), `heuristic.reading`, which only calls
# compiled functions ahead of time, and `heuristic.regions`, which reads GeoNames' data once.
MODULES = (
    "investigation.text",
    "investigation.tokens",
    "investigation.wordlists",
    "heuristic.absent",
    "heuristic.acronyms",
    "heuristic.asked",
    "heuristic.bridges",
    "heuristic.chains",
    "heuristic.compression",
    "heuristic.exclusions",
    "heuristic.focus",
    "heuristic.grader",
    "heuristic.kinds",
    "heuristic.lead",
    "heuristic.mentions",
    "heuristic.names",
    "heuristic.partial",
    "heuristic.pick_scoring",
    "heuristic.places",
    "heuristic.planner",
    "heuristic.plans",
    "heuristic.premises",
    "heuristic.prose",
    "heuristic.records",
    "heuristic.referents",
    "heuristic.router",
    "heuristic.selection",
    "heuristic.sequence",
    "heuristic.siblings",
    "heuristic.social",
    "heuristic.subjects",
    "heuristic.sufficiency",
    "heuristic.synthesis",
    "heuristic.thresholds",
    "heuristic.verdicts",
)
SOURCE_ROOT = Path(__file__).resolve().parents[1]
BUILD = SOURCE_ROOT / "build" / "mypyc"
MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class Status:
    active: bool
    reason: str  # "compiled (mypyc …)", or why the Python source runs


_status: Status | None = None
_allowed = True  # the entry point's word (`use`), read when the first compiled module is imported


def source_path(module: str) -> Path:
    return SOURCE_ROOT.joinpath(*module.split(".")).with_suffix(".py")


def digest(module: str) -> str:
    return hashlib.sha256(source_path(module).read_bytes()).hexdigest()


def extension_suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def use(allowed: bool) -> None:
    """Whether this process may run the compiled build: said by the entry point before it imports any of
    `MODULES` (the decision is taken once, at the first such import). Forbidden once the build is loaded, it
    raises: modules already imported cannot be swapped for their source."""
    global _allowed
    if _status is not None and _status.active and not allowed:
        raise RuntimeError(f"the heuristics were imported before the build was chosen ({_status.reason})")
    _allowed = allowed


def status() -> Status:
    """Whether the compiled modules are in use in this process (decided once, at the first import of one of
    them, or here)."""
    global _status
    if _status is None:
        _status = _decide(BUILD, _allowed)
    return _status


class _Finder:
    """Finds each of `MODULES` in the build while the build is in use; the path finders find the rest."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in MODULES or not status().active:
            return None
        return importlib.util.spec_from_file_location(fullname, _extension(BUILD, fullname))


def install() -> None:
    """Put the finder first on `sys.meta_path` (once per process): nothing is decided until it is asked."""
    if _Finder not in sys.meta_path:
        sys.meta_path.insert(0, _Finder)


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


def _decide(build: Path, allowed: bool) -> Status:
    if not allowed:
        return Status(False, "Python source (SLEUTH_COMPILED=false)")
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
