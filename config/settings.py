"""`Settings`: every knob Sleuth reads from the environment, built once per process.

The knobs are grouped by concern (`settings.limits.max_hops`, `settings.llm.model_fast`, ...); each keeps
its flat environment variable, `SLEUTH_` + the field's name (`SLEUTH_MAX_HOPS`), or the names its
`validation_alias` lists (`ELASTICSEARCH_URL`, `ANTHROPIC_API_KEY`, `SLEUTH_LLM` for `llm.provider`).
`Settings(max_hops=2)` takes the same flat names."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "SLEUTH_"
_GROUP = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


class EngineSettings(BaseModel):
    """Search engines, chunking and embeddings, caches."""

    model_config = _GROUP

    lexical_backend: str = Field(default="embedded", description="embedded | elasticsearch")
    vector_backend: str = Field(default="embedded", description="embedded | weaviate")
    entity_engine: bool = Field(
        default=False, description="Keep an entity index beside the embedded lexical one and add its "
        "`entities` engine to follow-up hops (docs/evaluation.md, 'Entity engine').")
    chunk_tokens: int = Field(default=200, ge=32, le=2000, description="Words per chunk at ingest.")
    embed_max_tokens: int = Field(default=128, ge=16, le=512,
                                  description="Tokens the embedder reads per text.")
    embeddings_dir: Path | None = Field(default=None, description=(
        "Embedding cache (vectors by content hash, safe to share between homes and processes); default "
        "SLEUTH_HOME/embeddings."))
    subquery_cache_ttl: int = Field(default=3600, ge=0,
                                    description="Seconds a cached sub-query result lives (0 = off).")
    text_cache: bool = Field(default=True, description=(
        "Memoise per-text work of the heuristic reasoner (folded words, stems, names; docs/performance.md); "
        "false runs the same code uncached, for the equality check."))
    elasticsearch_url: str | None = Field(
        default=None, validation_alias=AliasChoices("SLEUTH_ELASTICSEARCH_URL", "ELASTICSEARCH_URL"),
        description="Elasticsearch URL, e.g. http://elasticsearch:9200 (required by that backend).")
    elasticsearch_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLEUTH_ELASTICSEARCH_API_KEY", "ELASTICSEARCH_API_KEY"),
        description="Elasticsearch API key (base64 id:key); or use username/password.")
    elasticsearch_username: str | None = Field(default=None, description="Elasticsearch basic-auth user.")
    elasticsearch_password: SecretStr | None = Field(default=None,
                                                     description="Elasticsearch basic-auth password.")
    elasticsearch_ca_certs: Path | None = Field(default=None,
                                                description="CA bundle of the cluster's TLS certificate.")
    elasticsearch_verify_certs: bool = Field(default=True,
                                             description="Verify the cluster's TLS certificate.")
    elasticsearch_index: str = Field(default="sleuth-chunks",
                                     description="Alias of the shared chunk index (index: <alias>-v<N>).")
    elasticsearch_timeout: float = Field(default=10.0, gt=0, description="Seconds per Elasticsearch request.")
    elasticsearch_max_retries: int = Field(
        default=3, ge=0, le=10, description="Client retries on 429/502/503/504 and connection errors."
    )
    elasticsearch_bulk_chunk: int = Field(default=500, ge=1, le=10_000,
                                          description="Documents per _bulk request.")
    elasticsearch_shards: int = Field(default=1, ge=1, description="Primary shards of a newly created index.")
    elasticsearch_replicas: int = Field(default=1, ge=0,
                                        description="Replicas of a newly created index (0 on one node).")
    weaviate_url: str | None = Field(
        default=None, validation_alias=AliasChoices("SLEUTH_WEAVIATE_URL", "WEAVIATE_URL"),
        description="Weaviate REST URL, e.g. http://weaviate:8080 (required for the weaviate backend).")
    weaviate_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLEUTH_WEAVIATE_API_KEY", "WEAVIATE_API_KEY"),
        description="Weaviate API key; unset for anonymous access.")
    weaviate_grpc_port: int = Field(
        default=50051, ge=1, le=65535,
        validation_alias=AliasChoices("SLEUTH_WEAVIATE_GRPC_PORT", "WEAVIATE_GRPC_PORT"),
        description="Weaviate gRPC port (search and batch import go over gRPC).")
    weaviate_grpc_host: str | None = Field(default=None,
                                           description="Weaviate gRPC host; default: the URL's host.")
    weaviate_collection: str = Field(default="SleuthChunk",
                                     description="Multi-tenant collection holding every tenant's chunks.")
    weaviate_timeout: float = Field(default=30.0, gt=0,
                                    description="Seconds per Weaviate query or batch insert.")
    weaviate_batch_size: int = Field(default=200, ge=1, le=5000,
                                     description="Objects per Weaviate batch insert.")


class LimitSettings(BaseModel):
    """Budgets of one investigation, fairness between tenants, sizes the API accepts."""

    model_config = _GROUP

    max_hops: int = Field(default=3, ge=1, le=10,
                          description="Retrieval hops per investigation (default budget).")
    max_retrieval_calls: int = Field(default=24, ge=1, le=500,
                                     description="Engine calls (sub-query x engine) per investigation.")
    max_llm_tokens: int = Field(default=60_000, ge=0,
                                description="LLM tokens per investigation (0 = no LLM calls).")
    deadline_seconds: int = Field(default=120, ge=5, le=3600,
                                  description="Wall-clock budget; the watchdog ends investigations past it.")
    retrieve_k: int = Field(default=10, ge=1, le=100, description="Hits per sub-query per engine.")
    final_k: int = Field(default=10, ge=1, le=50, description="Evidence kept for synthesis.")
    evidence_token_budget: int = Field(
        default=1500, ge=100, description="Evidence tokens handed to synthesis."
    )
    max_question_bytes: int = Field(default=8192,
                                    description="Largest request body the API accepts (413 above).")
    request_body_timeout: float = Field(default=30.0, gt=0, le=600, description=(
        "Seconds the API waits for a request's whole body once its headers arrived (408 after)."))
    tenant_max_in_flight: int = Field(
        default=2, ge=0, description="Investigations of one tenant running at once; the rest wait in order.")
    tenant_intake_per_minute: int = Field(
        default=60, ge=0, description="Submissions per tenant per minute (a burst of this size, then this "
        "rate); above it 429 + Retry-After.")
    hook_max_bytes: int = Field(default=65_536, ge=1024,
                                description="Largest inbound helpdesk hook body (413 above).")
    ticket_max_chars: int = Field(default=4000, ge=200,
                                  description="Longest question taken from a ticket (subject + description).")
    tools_per_hop: int = Field(
        default=3, ge=0, le=10, description="Most tool calls a hop makes (0 = no tools)."
    )
    tenant_daily_llm_tokens: int = Field(
        default=5_000_000,
        ge=0,
        description="Per tenant per UTC day unless the tenant's limits say otherwise.",
    )


class WorkerSettings(BaseModel):
    """Celery workers and beat: timeouts, re-drive, retention."""

    model_config = _GROUP

    visibility_timeout: int = Field(
        default=300, ge=1, description="Seconds before an unacked task is redelivered."
    )
    task_time_limit: int = Field(default=120, ge=1, description="Hard Celery time limit per task, seconds.")
    worker_concurrency: int = Field(
        default=2, ge=1, description="Default worker processes (`sleuth worker`/`up` take --concurrency)."
    )
    watchdog_interval: float = Field(default=10.0, gt=0, description="Seconds between beat watchdog runs.")
    retention_days: int = Field(default=90, ge=1, description=(
        "Days a tenant's trace events and evidence text are kept unless the tenant sets its own "
        "(`sleuth tenants update T --retention-days N`); answers, citations and ratings stay."))
    retention_interval: float = Field(
        default=3600.0, gt=0, description="Seconds between beat retention runs."
    )
    retention_batch: int = Field(
        default=500,
        ge=1,
        le=100_000,
        description="Rows one retention transaction removes (small: never blocks intake).",
    )
    retention_batches: int = Field(
        default=200, ge=1, description="Transactions one retention run takes at most (the rest: next run)."
    )
    redrive_idle_seconds: float = Field(
        default=15.0,
        gt=0,
        description="An active investigation idle this long with nothing in flight is re-driven "
        "(see docs/reliability.md).",
    )
    redrive_inspect_timeout: float = Field(default=2.0, gt=0, description=(
        "Seconds the watchdog waits for the workers to say what they hold before it re-drives (each of three "
        "questions, asked twice; a worker on a loaded host can take over a second to reply)."))
    worker_warm_up: bool = Field(default=True, description=(
        "Each worker pool process builds its database engine, clients, search backends, reasoner and query "
        "embedding session as it starts, so its first investigation does not wait for them."))
    debug_retrieve_delay_ms: int = Field(default=0, ge=0,
                                         description="Test-only fault injection: sleep per retrieve task.")


class DeliverySettings(BaseModel):
    """Sending answers: webhooks, helpdesk notes, e-mail."""

    model_config = _GROUP

    webhook_timeout: float = Field(
        default=10.0, gt=0, description="Seconds per HTTP delivery attempt (webhook, Zendesk, Freshdesk)."
    )
    webhook_max_attempts: int = Field(default=6, ge=1, le=20,
                                      description="Attempts before a delivery is dead.")
    webhook_backoff_base: float = Field(default=2.0, ge=0, description="Seconds; doubles each attempt.")
    webhook_backoff_max: float = Field(default=600.0, ge=0,
                                       description="Longest wait between two attempts, seconds.")
    smtp_timeout: float = Field(default=20.0, gt=0, description="Seconds per SMTP delivery attempt.")
    smtp_ca_file: Path | None = Field(default=None,
                                      description="CA bundle trusted for SMTP TLS (a private relay's CA).")
    delivery_lock_margin: float = Field(default=60.0, ge=1, description=(
        "Seconds a delivery's lock outlives its channel timeout (a killed worker's lock expires after it)."))


class SecuritySettings(BaseModel):
    """Keys, sessions and sign-in links, attempt limits, outbound overrides."""

    model_config = _GROUP

    webhook_allow_private: bool = Field(
        default=False,
        description="Operator override: allow private/loopback/link-local delivery targets for "
        "every tenant (default refused; prefer `sleuth tenants update T --allow-host HOST`).",
    )
    secret_key: SecretStr | None = Field(default=None, description=(
        "Key encrypting secrets at rest (channels, tools, webhook signing; Fernet, urlsafe base64 of 32 "
        "bytes); default: SLEUTH_SECRET_KEY_FILE, else generated once under SLEUTH_HOME/secret.key (0600)."))
    secret_key_file: Path | None = Field(
        default=None,
        description=(
            "File holding the key (when SLEUTH_SECRET_KEY is unset); in production it must lie outside "
            "SLEUTH_HOME."
        ),
    )
    secret_key_previous: SecretStr | None = Field(default=None, description=(
        "Older keys, comma-separated, still accepted for reading while `sleuth secrets rotate` re-encrypts "
        "under the current one (docs/production.md)."))
    tools_allow_private: bool = Field(default=False, description=(
        "Operator override: tools may call private/loopback hosts for every tenant (default: only hosts "
        "on the tenant's allowlist)."))
    metrics_token: SecretStr | None = Field(default=None, description=(
        "/metrics (API and worker exporter) wants `Authorization: Bearer <token>`; unset, it is served only "
        "by a server bound to loopback."))
    session_secret: SecretStr | None = Field(
        default=None, description=("Signs `sleuth trace` links and the sign-in form's CSRF token; default: a "
                                   "random key in SLEUTH_HOME/run."))
    session_ttl_seconds: int = Field(default=8 * 3600, ge=60, description="Lifetime of a trace-page login.")
    link_ttl_seconds: int = Field(default=900, ge=30, description="Lifetime of a `sleuth trace` signed link.")
    link_session_ttl_seconds: int = Field(default=3600, ge=60,
                                          description="Lifetime of the session a `sleuth trace` link opens.")
    auth_failure_limit: int = Field(default=40, ge=1, description=(
        "Failed sign-ins / bad API keys allowed per client address (and per tenant, when a credential names "
        "one) in a window; past it 429 + Retry-After until the window ends."))
    auth_failure_window_seconds: int = Field(
        default=600, ge=1, description="The window of auth_failure_limit."
    )
    flower_basic_auth: SecretStr | None = Field(
        default=None,
        description="user:password for `sleuth flower` (default: generated when not on loopback).",
    )


class ObservabilitySettings(BaseModel):
    """Logs, metrics and traces."""

    model_config = _GROUP

    log_format: str = Field(default="auto", pattern="^(auto|json|text)$",
                            description="auto: readable text on a terminal, JSON lines otherwise.")
    log_level: str = Field(
        default="INFO", description="Level of Sleuth's own loggers (libraries stay at WARNING)."
    )
    metrics_dir: Path | None = Field(
        default=None, description="prometheus-client multiprocess directory; default SLEUTH_HOME/run/metrics."
    )
    metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="`sleuth worker` serves its pool's /metrics on this port (0 = off).",
    )
    metrics_max_tenants: int = Field(
        default=50, ge=0, description="Tenants with their own metric label; the rest count as `other`."
    )
    otel_enabled: bool = Field(
        default=False, description="Emit OpenTelemetry spans (needs opentelemetry-sdk)."
    )
    otel_endpoint: str | None = Field(
        default=None, description="OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces."
    )
    otel_service_name: str = Field(default="sleuth", description="service.name of the exported spans.")


class LLMSettings(BaseModel):
    """The reasoner: heuristic or Claude, models, retries, the shared rate limiter."""

    model_config = _GROUP

    provider: str = Field(
        validation_alias="SLEUTH_LLM", default="heuristic", description="heuristic | anthropic"
    )
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY",
                                               description="Anthropic API key (SLEUTH_LLM=anthropic).")
    llm_fallback: str = Field(
        default="heuristic",
        pattern="^(heuristic|none)$",
        description="Who finishes when the LLM is out of budget or retries: heuristic | none.",
    )
    model_fast: str = Field(default="claude-haiku-5-5", description="Routing, planning, grading, judging.")
    model_synthesis: str = Field(default="claude-sonnet-5-5", description="The cited answer.")
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("SLEUTH_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        description="Gateway or test server; default the SDK's.")
    llm_timeout: float = Field(default=60.0, gt=0, description="Seconds per Messages API request.")
    llm_max_retries: int = Field(
        default=3, ge=0, le=10, description="Retries of one call on 429/529/5xx/timeouts."
    )
    llm_backoff_base: float = Field(default=1.0, ge=0, description="Seconds; doubles each retry (jittered).")
    llm_backoff_max: float = Field(default=20.0, ge=0, description="Cap of one wait, retry-after included.")
    llm_effort_fast: str = Field(default="low", description="output_config.effort of the fast model's calls.")
    llm_effort_synthesis: str = Field(default="medium", description="output_config.effort of synthesis.")
    llm_grade_max_passages: int = Field(
        default=24, ge=1, le=100, description="Passages graded per hop (one call)."
    )
    llm_requests_per_minute: int = Field(default=1000, ge=0, description="Per API key, all workers; 0 = off.")
    llm_input_tokens_per_minute: int = Field(default=400_000, ge=0, description="Per API key; 0 = off.")
    llm_output_tokens_per_minute: int = Field(default=80_000, ge=0, description="Per API key; 0 = off.")
    llm_rate_limit_max_wait: float = Field(
        default=30.0, ge=0, description="Longest wait for the shared limiter."
    )


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
            group = getattr(self, key) if key in _GROUPS else None
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


_GROUPS: dict[str, type[BaseModel]] = {
    "engines": EngineSettings,
    "limits": LimitSettings,
    "workers": WorkerSettings,
    "delivery": DeliverySettings,
    "security": SecuritySettings,
    "observability": ObservabilitySettings,
    "llm": LLMSettings,
}


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
        group = _GROUPS.get(name)
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
    for group in _GROUPS:  # `llm="anthropic"`: a group's own name is also a flat name (SLEUTH_LLM)
        if isinstance(data.get(group), str) and group in _FLAT_NAMES:
            data[group] = {_FLAT_NAMES[group][1]: data[group]}
    for name in list(data):
        if not isinstance(name, str) or name in _GROUPS:
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
        for names, group, name, _ in settings_fields():
            found = next((environ[variable] for variable in names if variable in environ), None)
            if found is None:
                continue
            if group is None:
                values[name] = found
            else:
                values.setdefault(group, {})[name] = found
        return values


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests build their own `Settings` and pass them explicitly)."""
    return Settings()
