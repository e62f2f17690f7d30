"""The rings, enforced: which of the product's packages may import which (read from the source with `ast`),
and no function-local import of the product's own modules outside the CLI (whose commands import lazily, so
`sleuth --help` stays fast), but the few listed here, each with its reason.

Pure domain (`investigation`, `heuristic`) ← I/O (`storage`, `adapters`) ← composition (`bootstrap`) ← thin
shells (`tasks`) ← application (`app`) ← entry points (`workers.app` through `workers`, `api`, `cli`). The
task
shell asks the application for tenant fairness through a port (`tasks.fairness`), never by importing it."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "investigation",
    "heuristic",
    "config",
    "storage",
    "adapters",
    "bootstrap",
    "observability",
    "tasks",
    "app",
    "workers",
    "api",
    "cli",
)
_DOMAIN = {"investigation", "heuristic"}
_IO = _DOMAIN | {"config", "storage", "adapters"}
# What each package may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "investigation": {"investigation"},
    "heuristic": {"investigation"},
    "config": set(),
    "storage": {"config", "investigation"},
    "adapters": {"config", "investigation", "heuristic", "storage"},
    "bootstrap": _IO,
    # Logs, metrics and spans of every task; the worker's per-process runtime and queue names.
    "observability": _IO | {"bootstrap", "workers"},
    "tasks": _IO | {"bootstrap", "observability", "workers"},
    "app": _IO | {"bootstrap", "tasks", "workers"},
    # `workers.app` is the composition root of every process that builds the Celery app.
    "workers": _IO | {"bootstrap", "observability", "tasks", "app"},
    "api": _IO | {"bootstrap", "observability", "tasks", "app", "workers"},
    "cli": set(PACKAGES),
}
# Imports across the rings kept for now, each with its reason: file → packages it may import besides.
CROSSING: dict[str, set[str]] = {
    # The source-sync tasks run the application's sync use case directly (to go behind a port like
    # `tasks.fairness` when they settle).
    "tasks/source_tasks.py": {"app"},
}
# Function-local imports of the product's own modules kept on purpose: (file, module imported) → why.
LAZY: dict[tuple[str, str], str] = {
    **{
        (
            "bootstrap/services.py",
            m,
        ): "a backend, model or client is imported only when configured and first used"
        for m in (
            "investigation",
            "storage.db",
            "storage.secrets",
            "storage.redis_state",
            "adapters.search.embedder",
            "adapters.search.embedded_lexical",
            "adapters.search.embedded_vector",
            "adapters.search.embedded_entities",
            "adapters.search.elasticsearch",
            "adapters.search.weaviate",
            "adapters.llm.heuristic",
            "adapters.llm.anthropic",
            "storage.rate_limit",
            "adapters.llm.claude_budget",
        )
    },
    ("observability/events.py", "adapters.llm.claude_pricing"): "only when an LLM call is observed",
    ("observability/exposition.py", "storage.models"): "the SQL models only for a metrics scrape",
    (
        "tasks/tool_step.py",
        "adapters.llm.claude_tools",
    ): "the Claude SDK only for a tenant whose tools a model picks",
    ("tasks/tool_step.py", "tasks.llm_usage"): "only with the Claude tool picker",
    ("tasks/tool_step.py", "adapters.search.embedder"): "the ONNX runtime only when a tool is ranked",
    ("api/app.py", "workers.app"): "the Celery app only once the API sends a task",
    ("api/app.py", "tasks"): "the canvas only once the API sends a task",
    ("api/app.py", "api.pages"): "the console's pages only when it is served",
    ("api/app.py", "observability"): "metrics and tracing only when switched on",
    ("api/finished.py", "storage.redis_state"): "the Redis client only when a request long-polls",
    ("app/source_readers.py", "adapters.sources.tickets"): "a source's reader only when that source syncs",
    ("app/source_readers.py", "adapters.sources.sitemap"): "a source's reader only when that source syncs",
    ("storage/migrations/env.py", "storage.db"): "Alembic runs this file as a script",
}


@dataclass(frozen=True)
class Import:
    path: str  # the importing file, relative to the repository
    line: int
    module: str
    local: bool  # inside a function


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def _walk(path: str, node: ast.AST, local: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        for module in _imported(child):
            yield Import(path, getattr(child, "lineno", 0), module, local)
        yield from _walk(path, child, local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))


@functools.cache
def _imports() -> tuple[Import, ...]:
    """Every import statement of the product's packages (each file parsed once for the three tests)."""
    files = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))
    return tuple(
        found
        for p in files
        for found in _walk(str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8")), False)
    )


def _own(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def test_each_package_imports_only_the_rings_it_may() -> None:
    wrong = []
    for imp in filter(lambda i: _own(i.module), _imports()):
        package, top = imp.path.split("/")[0], imp.module.split(".")[0]
        if top != package and top not in ALLOWED[package] | CROSSING.get(imp.path, set()):
            wrong.append(f"{imp.path}:{imp.line} imports {imp.module}")
    assert wrong == []


def test_the_task_shell_never_imports_the_application_ring() -> None:
    """The shell asks for tenant fairness through its port (`tasks.fairness`): the application installs it."""
    reached = [
        f"{imp.path}:{imp.line}"
        for imp in _imports()
        if imp.path.startswith("tasks/") and imp.path not in CROSSING
        and imp.module.split(".")[0] in ("app", "api", "cli")
    ]
    assert reached == []


def test_no_function_local_import_of_the_products_modules_outside_the_cli() -> None:
    found = {(imp.path, imp.module) for imp in _imports()
             if imp.local and _own(imp.module) and not imp.path.startswith("cli/")}
    assert sorted(found - LAZY.keys()) == []
