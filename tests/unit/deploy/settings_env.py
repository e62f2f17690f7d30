"""The environment variables `Settings` reads (`config.settings.settings_fields`: field names, env prefix,
validation aliases), and the documentation table generated from the field descriptions, one per group.

    .venv/bin/python -m tests.unit.deploy.settings_env   # prints the table of docs/settings.md
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from config.settings import Settings, settings_fields

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "settings.md"
TABLE_START = "<!-- settings-table:start -->"
TABLE_END = "<!-- settings-table:end -->"
# Read by programs other than Sleuth in the same containers: Flower reads its own FLOWER_* options, and
# KEDA reads the Redis password from the shared Secret.
EXTERNAL = {
    "FLOWER_BASIC_AUTH": "Flower's basic auth (user:password)",
    "REDIS_PASSWORD": "KEDA's Redis password",
}


def env_to_field() -> dict[str, str]:
    """Every variable name Settings reads → the flat name `Settings(...)` takes for it."""
    return {variable: name for variables, _, name, _ in settings_fields() for variable in variables}


def settings_from_env(env: dict[str, str]) -> Settings:
    """Settings built from exactly these variables (the process environment ignored)."""
    fields = env_to_field()
    unknown = sorted(set(env) - set(fields))
    if unknown:
        raise AssertionError(f"not Settings variables: {unknown}")
    values: dict[str, Any] = {fields[k]: v for k, v in env.items()}
    return Settings.model_validate(values)


def _default(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None or isinstance(value, SecretStr):
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, Path):
        value = value.as_posix()
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def env_table() -> str:
    """The markdown table of every Settings variable: names, default, meaning (the field description), with
    a row naming each group (`settings.<group>.<field>` in code)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    current: str | None = None
    for variables, group, _, field in settings_fields():
        if group != current and group is not None:
            rows.append(f"| **{group}** | | `settings.{group}.*` |")
        current = group
        names = " / ".join(f"`{env}`" for env in variables)
        secret = " (secret)" if "SecretStr" in str(field.annotation) else ""
        rows.append(f"| {names} | {_default(field)} | {_cell(field.description or '')}{secret} |")
    return "\n".join(rows)


def documented_table(text: str) -> str:
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return text[start:end].strip()


if __name__ == "__main__":
    print(env_table())
