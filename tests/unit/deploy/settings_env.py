"""The environment variables `Settings` reads, derived from the class itself (field names, env prefix,
validation aliases), and the documentation table generated from the field descriptions.

    .venv/bin/python -m tests.unit.deploy.settings_env   # prints the table of docs/production.md
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

from config.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "production.md"
TABLE_START = "<!-- settings-table:start -->"
TABLE_END = "<!-- settings-table:end -->"
# Read by programs other than Sleuth in the same containers: Flower reads its own FLOWER_* options, and
# KEDA reads the Redis password from the shared Secret.
EXTERNAL = {"FLOWER_BASIC_AUTH": "Flower's basic auth (user:password)", "REDIS_PASSWORD": "KEDA's Redis password"}


def env_names(name: str, field: FieldInfo) -> list[str]:
    """Variables that set `name`, preferred spelling first."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice).upper() for choice in alias.choices if isinstance(choice, str)]
    if isinstance(alias, str):
        return [alias.upper()]
    return [f"{prefix}{name}".upper()]


def env_to_field() -> dict[str, str]:
    """Every variable name Settings reads → the field it sets."""
    return {env: name for name, field in Settings.model_fields.items() for env in env_names(name, field)}


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
    """The markdown table of every Settings variable: names, default, meaning (the field description)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        names = " / ".join(f"`{env}`" for env in env_names(name, field))
        secret = " (secret)" if "SecretStr" in str(field.annotation) else ""
        rows.append(f"| {names} | {_default(field)} | {_cell(field.description or '')}{secret} |")
    return "\n".join(rows)


def documented_table(text: str) -> str:
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return text[start:end].strip()


if __name__ == "__main__":
    print(env_table())
