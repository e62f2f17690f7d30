"""A table model's list columns default to a fresh empty list made by a plain function, not by `list`.

SQLModel builds a table model's defaults anew for every row object, and pydantic then inspects each
factory's signature: ~100 µs for the builtin `list` against ~5 µs for a function, which made building an
investigation's row at intake cost ~0.5 ms (docs/performance.md, twenty-first pass).
"""

from __future__ import annotations

from sqlmodel import SQLModel

from storage import models
from storage.models import Hop, Investigation, empty_list


def _table_models() -> list[type[SQLModel]]:
    return [
        obj
        for obj in vars(models).values()
        if isinstance(obj, type) and issubclass(obj, SQLModel) and getattr(obj, "__table__", None) is not None
    ]


def test_no_table_model_defaults_a_column_with_the_builtin_list() -> None:
    tables = _table_models()
    assert Investigation in tables and Hop in tables
    builtin = [f"{model.__name__}.{name}" for model in tables for name, field in model.model_fields.items()
               if field.default_factory is list]
    assert builtin == []


def test_list_defaults_are_fresh_empty_lists() -> None:
    first, second = Hop(investigation_id="a", number=1), Hop(investigation_id="b", number=1)
    assert first.queries == [] and first.engines == [] and first.tools == []
    first.queries.append({"text": "x"})
    assert second.queries == [] and empty_list() == [] and empty_list() is not empty_list()
