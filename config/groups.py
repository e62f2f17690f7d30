"""The groups of `Settings` by concern: search engines, budgets and limits, workers, delivery, security,
observability, the reasoner. Each field keeps its flat environment variable (`config.settings`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr

_GROUP = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


class EngineSettings(BaseModel):
    """Search engines, chunking and embeddings, caches."""

    model_config = _GROUP

    lexical_backend: str = Field(default="embedded", description="embedded | elasticsearch")
    vector_backend: str = Field(default="embedded", description="embedded | weaviate")
    entity_engine: bool = Field(
        default=False, description="Keep an entity index beside the embedded lexical one and add its "
        "`entities` engine to follow-up hops (docs/evaluation.md).")
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
    compiled: bool = Field(default=True, description=(
        "Run the heuristic reasoner compiled by mypyc when a build of the current sources is in "
        "build/mypyc/ (`make install`, `make compile`); false runs the Python source, with the same results "
        "(a profiler then sees inside the heuristics). Taken as a process starts, before the heuristics are "
        "imported."))
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
    broker_health_check: int = Field(default=5, ge=1, le=300, description=(
        "Seconds between checks of a worker's long-lived Redis connections: one left half-open by a network "
        "cut is dropped and made again within about twice this after the network returns."))
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
        "Seconds the watchdog waits for the workers to say what they hold before it re-drives (asked twice; "
        "a worker on a loaded host can take over a second to reply)."))
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


# Each group by its attribute on `Settings`.
GROUPS: dict[str, type[BaseModel]] = {
    "engines": EngineSettings,
    "limits": LimitSettings,
    "workers": WorkerSettings,
    "delivery": DeliverySettings,
    "security": SecuritySettings,
    "observability": ObservabilitySettings,
    "llm": LLMSettings,
}
