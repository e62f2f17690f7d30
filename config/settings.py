"""`Settings`: every knob Sleuth reads from the environment, built once per process.

The knobs are grouped by concern (`settings.limits.max_hops`, `settings.llm.model_fast`, ...); each keeps
its flat environment variable, `SLEUTH_` + the field's name (`SLEUTH_MAX_HOPS`), or the names its
`validation_alias` lists (`ELASTICSEARCH_URL`, `ANTHROPIC_API_KEY`, `SLEUTH_LLM` for `llm.provider`).
`Settings(max_hops=2)` takes the same flat names. The groups themselves are in `config.groups`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from config.groups import (
    GROUPS,
    DeliverySettings,
    EngineSettings,
    LimitSettings,
    LLMSettings,
    ObservabilitySettings,
    SecuritySettings,
    WorkerSettings,
)

# The groups are defined in `config.groups` and importable from here, as `Settings` is.
__all__ = [
    "ENV_PREFIX", "DeliverySettings", "EngineSettings", "LLMSettings", "LimitSettings",
    "ObservabilitySettings", "SecuritySettings", "Settings", "WorkerSettings", "get_settings", "grouped",
    "settings_fields", "variables",
]

ENV_PREFIX = "SLEUTH_"


class Settings(BaseSettings):
    """All configuration. Defaults give the embedded, offline setup under `SLEUTH_HOME`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", frozen=True, populate_by_name=True
    )

    # the flat names are taken too (`_group_flat_names`), which the synthesized signature hides
    if TYPE_CHECKING:
        def __init__(self, **values: Any) -> None: ...

    home: Path = Field(
        default=Path(".sleuth"), description="Data directory (indexes, SQLite, embedded Redis)."
    )
    env: Literal["development", "production"] = Field(default="development", description=(
        "production: `sleuth up`/`api`/`worker` refuse to start without SLEUTH_SECRET_KEY (or a key file "
        "outside SLEUTH_HOME) and SLEUTH_SESSION_SECRET (docs/production.md)."))
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default SQLite in SLEUTH_HOME."
    )
    redis_url: str | None = Field(
        default=None, description="Broker/state Redis; default: embedded redis-server."
    )
    redis_prefix: str = Field(default="sleuth", description="Prefix of every Redis key Sleuth writes.")
    broker_url: str | None = Field(default=None, description=(
        "Celery's broker: amqp://user:pass@host:5672/vhost for RabbitMQ (quorum queues); default: the Redis "
        "URL. Redis stays the state store and result backend either way (docs/production.md)."))
    public_url: str | None = Field(
        default=None, description="Public base URL of the API; answers then link to their trace."
    )
    api_host: str = Field(default="127.0.0.1",
                          description="API bind address (`sleuth api`/`up` take --host).")
    api_port: int = Field(default=8000, description="API port (`sleuth api`/`up` take --port).")

    engines: EngineSettings = Field(default_factory=EngineSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, _FlatEnvironment(settings_cls)

    @model_validator(mode="before")
    @classmethod
    def _group_flat_names(cls, data: Any) -> Any:
        return grouped(data) if isinstance(data, dict) else data


    @model_validator(mode="after")
    def _timeouts_agree(self) -> Settings:
        """The visibility timeout, task time limit, watchdog and deadline must agree (docs/reliability.md):
        a running task is never handed to a second worker, and lost work is re-driven well before the
        deadline."""
        workers, limits = self.workers, self.limits
        if workers.visibility_timeout <= workers.task_time_limit:
            raise ValueError(
                f"visibility_timeout ({workers.visibility_timeout}s) must exceed task_time_limit "
                f"({workers.task_time_limit}s), or a task still running is redelivered to another "
                "worker"
            )
        if workers.redrive_idle_seconds + workers.watchdog_interval >= limits.deadline_seconds:
            raise ValueError(f"redrive_idle_seconds + watchdog_interval ({workers.redrive_idle_seconds:g}s + "
                             f"{workers.watchdog_interval:g}s) must stay under deadline_seconds "
                             f"({limits.deadline_seconds}s): lost work must be re-driven before the deadline")
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Settings:
        """A copy with `update` applied, by flat names too (`{"deadline_seconds": 5}` changes `limits`)."""
        changes: dict[str, Any] = {}
        for key, value in grouped(update or {}).items():
            group = getattr(self, key) if key in GROUPS else None
            changes[key] = (
                group.model_copy(update=value) if group is not None and isinstance(value, dict) else value
            )
        return super().model_copy(update=changes, deep=deep)

    def as_env(self) -> dict[str, str]:
        """These settings as SLEUTH_* variables, to hand to a child process (secrets excluded)."""
        env: dict[str, str] = {}
        for variables, group, name, _ in settings_fields():
            value = getattr(getattr(self, group) if group else self, name)
            if value is None or isinstance(value, SecretStr):
                continue
            env[variables[0]] = str(value.resolve() if isinstance(value, Path) else value)
        return env

    @property
    def sqlite_path(self) -> Path:
        return self.home / "sleuth.db"

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.sqlite_path.resolve()}"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def effective_embeddings_dir(self) -> Path:
        return self.engines.embeddings_dir or self.home / "embeddings"

    @property
    def effective_metrics_dir(self) -> Path:
        return self.observability.metrics_dir or self.home / "run" / "metrics"




def variables(name: str, field: FieldInfo) -> tuple[str, ...]:
    """The environment variables that set a field, preferred spelling first."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice).upper() for choice in alias.choices if isinstance(choice, str))
    if isinstance(alias, str):
        return (alias.upper(),)
    return (f"{ENV_PREFIX}{name}".upper(),)


def settings_fields() -> Iterator[tuple[tuple[str, ...], str | None, str, FieldInfo]]:
    """Every setting: (its variables, its group or None at the top, its name, its field), in declared
    order."""
    for name, field in Settings.model_fields.items():
        group = GROUPS.get(name)
        if group is None:
            yield variables(name, field), None, name, field
            continue
        for sub, subfield in group.model_fields.items():
            yield variables(sub, subfield), name, sub, subfield


# A flat name (the variable's name without the prefix) → (group, field) for the grouped settings.
_FLAT_NAMES: dict[str, tuple[str, str]] = {
    variable.removeprefix(ENV_PREFIX).lower(): (group, name)
    for variable_names, group, name, _ in settings_fields() if group is not None
    for variable in (*variable_names, f"{ENV_PREFIX}{name}".upper())}


def grouped(values: Mapping[Any, Any]) -> dict[Any, Any]:
    """`max_hops=2` → `limits={"max_hops": 2}`: flat names (the variables' names, any case, with or without
    the prefix) moved into their group; other keys as they are."""
    data = dict(values)
    for group in GROUPS:  # `llm="anthropic"`: a group's own name is also a flat name (SLEUTH_LLM)
        if isinstance(data.get(group), str) and group in _FLAT_NAMES:
            data[group] = {_FLAT_NAMES[group][1]: data[group]}
    for name in list(data):
        if not isinstance(name, str) or name in GROUPS:
            continue
        place = _FLAT_NAMES.get(name.upper().removeprefix(ENV_PREFIX).lower())
        if place is None:
            continue
        group, field = place
        current = data.get(group)
        merged = dict(current) if isinstance(current, dict) else (
            current.model_dump() if isinstance(current, BaseModel) else {})
        merged[field] = data.pop(name)
        data[group] = merged
    return data


class _FlatEnvironment(PydanticBaseSettingsSource):
    """Reads each setting from its flat variable (names compared without case, as pydantic-settings does)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads every field at once

    def __call__(self) -> dict[str, Any]:
        environ = {key.upper(): value for key, value in os.environ.items()}
        values: dict[str, Any] = {}
        for names, group, name, field in settings_fields():
            found = next((environ[variable] for variable in names if variable in environ), None)
            if found is None or (found.strip() == "" and field.default is None):
                continue  # `VAR=` on a setting that is off by default leaves it off (never Path("") = here)
            if group is None:
                values[name] = found
            else:
                values.setdefault(group, {})[name] = found
        return values


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests build their own `Settings` and pass them explicitly)."""
    return Settings()
