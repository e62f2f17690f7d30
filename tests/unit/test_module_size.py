"""Modules small enough to read in one sitting: no product module over `LIMIT` lines (scripts/, tests/ and
the Alembic migrations aside)."""

from __future__ import annotations

from tests.unit.test_import_rings import PACKAGES, ROOT

LIMIT = 350
# Modules allowed over the limit while being split; empty, and to stay so.
BEING_SPLIT: frozenset[str] = frozenset()


def test_no_product_module_is_over_the_limit() -> None:
    over = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if "migrations" in path.relative_to(ROOT).parts or name in BEING_SPLIT:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMIT:
                over[name] = lines
    assert over == {}, f"over {LIMIT} lines: {over}"


def test_the_exemptions_name_existing_modules() -> None:
    assert all((ROOT / name).is_file() for name in BEING_SPLIT)
