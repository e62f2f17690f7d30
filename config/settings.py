"""`Settings`: every knob Sleuth reads from the environment (prefix `SLEUTH_`), built once per process."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All configuration. Defaults give the embedded, offline setup under `SLEUTH_HOME`."""

    model_config = SettingsConfigDict(env_prefix="SLEUTH_", extra="ignore", frozen=True)

    home: Path = Field(default=Path(".sleuth"), description="Data directory (indexes, SQLite, embedded Redis).")
    database_url: str | None = Field(default=None, description="SQLAlchemy URL; default SQLite in SLEUTH_HOME.")
    redis_url: str | None = Field(default=None, description="Broker/state Redis; default: embedded redis-server.")
    redis_prefix: str = Field(default="sleuth", description="Prefix of every Redis key Sleuth writes.")

    lexical_backend: str = Field(default="embedded", description="embedded | elasticsearch")
    vector_backend: str = Field(default="embedded", description="embedded | weaviate")
    llm: str = Field(default="heuristic", description="heuristic | anthropic")

    # Loop defaults; a tenant's limits cap per-investigation overrides.
    max_hops: int = Field(default=3, ge=1, le=10)
    max_retrieval_calls: int = Field(default=24, ge=1, le=500)
    max_llm_tokens: int = Field(default=60_000, ge=0)
    deadline_seconds: int = Field(default=120, ge=5, le=3600)
    retrieve_k: int = Field(default=10, ge=1, le=100, description="Hits per sub-query per engine.")
    final_k: int = Field(default=10, ge=1, le=50, description="Evidence kept for synthesis.")
    evidence_token_budget: int = Field(default=1500, ge=100, description="Evidence tokens handed to synthesis.")
    chunk_tokens: int = Field(default=200, ge=32, le=2000, description="Words per chunk at ingest.")
    embed_max_tokens: int = Field(default=128, ge=16, le=512)
    subquery_cache_ttl: int = Field(default=3600, ge=0)
    max_question_bytes: int = Field(default=8192)

    # Celery
    visibility_timeout: int = Field(default=300, ge=1, description="Seconds before an unacked task is redelivered.")
    task_time_limit: int = Field(default=120, ge=1)
    worker_concurrency: int = Field(default=2, ge=1)
    watchdog_interval: float = Field(default=10.0, gt=0)

    # Delivery
    webhook_timeout: float = Field(default=10.0, gt=0)
    webhook_max_attempts: int = Field(default=6, ge=1, le=20)
    webhook_backoff_base: float = Field(default=2.0, ge=0, description="Seconds; doubles each attempt.")
    webhook_backoff_max: float = Field(default=600.0, ge=0)
    webhook_allow_private: bool = Field(default=True, description="Allow callback URLs on private/loopback hosts.")

    # API
    api_host: str = "127.0.0.1"
    api_port: int = 8000

    # Fault injection for the kill-a-worker test only: a retrieve task sleeps this long.
    debug_retrieve_delay_ms: int = Field(default=0, ge=0)

    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")

    def as_env(self) -> dict[str, str]:
        """These settings as SLEUTH_* variables, to hand to a child process (secrets excluded)."""
        env: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None or isinstance(value, SecretStr):
                continue
            env[f"SLEUTH_{name.upper()}"] = str(value.resolve() if isinstance(value, Path) else value)
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


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests build their own `Settings` and pass them explicitly)."""
    return Settings()
