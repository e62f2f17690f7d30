"""`Services`: builds the clients, engines and providers a process needs, lazily, after fork."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

from config.settings import Settings
from investigation.entities import ENGINE as FOLLOW_UP_ENGINE
from investigation.errors import PermanentError

if TYPE_CHECKING:
    import redis
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

    from investigation.ports import Embedder, Reasoner, SearchBackend
    from storage.rate_limit import TokenBucketLimiter
    from storage.redis_state import RedisState
    from storage.secrets import SecretBox


log = logging.getLogger(__name__)

# An operator who sets one of these chooses the BLAS threads themselves.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_blas_limited = False  # a forked child inherits both the flag and the library's setting


def limit_blas_threads() -> None:
    """numpy's BLAS on one thread in this process (unless the environment sets a count).

    A vector search is one matrix-vector product over the tenant's chunks (`store.vectors @ query`): at 2,000
    chunks OpenBLAS splits it over every core, and its threads then spin waiting for more work, doubling the
    CPU of an investigation for no time gained, on cores the other worker processes need. One thread also
    makes the scores independent of the machine's core count (a product split over two threads can differ in
    the last bit). Runs in every process that builds `Services`; a forked child keeps the setting."""
    global _blas_limited
    if _blas_limited or any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        return
    import numpy  # noqa: F401  # threadpoolctl only sees libraries already loaded
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # it reads the loaded libraries: once per process
    _blas_limited = True


class Services:
    """Everything a worker, the API or the CLI talks to, built on first use from one `Settings`."""

    def __init__(self, settings: Settings, *, one_process: bool = False) -> None:
        """`one_process`: every step of this process's investigations runs here (the in-process executor,
        `tasks.inline`), so nothing computed for one step has to reach another process through Redis."""
        from investigation import memo

        self.settings = settings
        self.one_process = one_process
        memo.set_enabled(settings.engines.text_cache)  # process-wide, like the settings it comes from
        limit_blas_threads()

    @cached_property
    def engine(self) -> Engine:
        from storage.db import make_engine, migrate

        self.settings.home.mkdir(parents=True, exist_ok=True)
        engine = make_engine(self.settings.effective_database_url)
        migrate(engine, secret_box=self.secret_box)
        return engine

    def secret_box(self) -> SecretBox:
        """The box sealing and opening stored secrets, read afresh (a `sleuth secrets rotate` may have
        changed the embedded key since the last call)."""
        from storage.secrets import SecretBox

        return SecretBox.from_settings(self.settings)

    @contextmanager
    def session(self) -> Iterator[Session]:
        from storage.db import session_scope

        with session_scope(self.engine) as session:
            yield session

    @cached_property
    def redis(self) -> redis.Redis:
        from storage.redis_state import client_from_url

        if not self.settings.redis_url:
            raise PermanentError("no Redis configured: run `sleuth up` or set SLEUTH_REDIS_URL")
        return client_from_url(self.settings.redis_url)

    @cached_property
    def state(self) -> RedisState:
        from storage.redis_state import RedisState

        return RedisState(self.redis, self.settings.redis_prefix)

    @cached_property
    def embedder(self) -> Embedder:
        from adapters.search.embedder import MiniLMEmbedder, RedisVectors

        # Query vectors are shared by this deployment's processes through Redis when there is one: a query
        # embedded by a retrieval task in one pool process is graded by a reducer in another. In one process
        # the in-memory LRU already holds it, and the two round trips sat on every vector slot's path.
        shared = (RedisVectors(self.redis, f"{self.settings.redis_prefix}:vec")
                  if self.settings.redis_url and not self.one_process else None)
        return MiniLMEmbedder(cache_dir=self.settings.effective_embeddings_dir,
                              max_tokens=self.settings.engines.embed_max_tokens, shared=shared)

    def prepare_queries(self, texts: Sequence[str]) -> None:
        """A hop's queries are decided: start embedding them for its vector search now, in the background
        (`MiniLMEmbedder.prepare`), so the model runs while the step writes and the hop is dispatched.
        Best effort: an embedder that cannot be built or started is the vector search's to report (the
        hop degrades, as DESIGN.md promises), never the step's."""
        from adapters.search.embedder import MiniLMEmbedder

        try:
            if isinstance(self.embedder, MiniLMEmbedder):
                self.embedder.prepare(texts)
        except Exception:  # best effort: see the docstring
            log.debug("queries not prepared", exc_info=True)

    def preparing_queries(self) -> bool:
        """Whether queries handed to `prepare_queries` are still being embedded: the model is running (False
        for an embedder that embeds nothing ahead)."""
        from adapters.search.embedder import MiniLMEmbedder

        return isinstance(self.embedder, MiniLMEmbedder) and self.embedder.preparing()

    @cached_property
    def backends(self) -> dict[str, SearchBackend]:
        """Search engines by name, in the order the loop queries them (lexical, vector)."""
        found: dict[str, SearchBackend] = {}
        if self.settings.engines.lexical_backend == "embedded":
            from adapters.search.embedded_lexical import EmbeddedBM25

            found["bm25"] = EmbeddedBM25(self.settings.index_dir)
        elif self.settings.engines.lexical_backend == "elasticsearch":
            from adapters.search.elasticsearch import ElasticsearchLexical

            found["elasticsearch"] = ElasticsearchLexical.from_settings(self.settings)
        else:
            raise PermanentError(
                f"lexical backend {self.settings.engines.lexical_backend!r} is not available"
            )
        if self.settings.engines.vector_backend == "embedded":
            from adapters.search.embedded_vector import EmbeddedVectorIndex

            found["vector"] = EmbeddedVectorIndex(self.settings.index_dir, self.embedder)
        elif self.settings.engines.vector_backend == "weaviate":
            from adapters.search.weaviate import WeaviateVector

            # The same embedder as the embedded index: switching engines never needs a re-embedding.
            found["weaviate"] = WeaviateVector.from_settings(self.settings, self.embedder)
        else:
            raise PermanentError(f"vector backend {self.settings.engines.vector_backend!r} is not available")
        if self.settings.engines.entity_engine and self.settings.engines.lexical_backend == "embedded":
            from adapters.search.embedded_entities import EmbeddedEntityIndex

            found[FOLLOW_UP_ENGINE] = EmbeddedEntityIndex(self.settings.index_dir)
        elif self.settings.engines.entity_engine and self.settings.engines.lexical_backend == "elasticsearch":
            from adapters.search.elasticsearch import ElasticsearchEntities

            found[FOLLOW_UP_ENGINE] = ElasticsearchEntities.from_settings(self.settings)
        return found

    @cached_property
    def reasoner(self) -> Reasoner:
        """The process-wide provider (unbound: no budgets). Steps use `reasoner_for`."""
        from adapters.llm.heuristic import heuristic_reasoner

        if self.settings.llm.provider == "heuristic":
            return heuristic_reasoner(self.embedder)
        if self.settings.llm.provider == "anthropic":
            from adapters.llm.anthropic import build_claude_reasoner

            return build_claude_reasoner(self.settings, fallback=heuristic_reasoner(self.embedder),
                                         limiter=self.llm_limiter)
        raise PermanentError(f"LLM provider {self.settings.llm.provider!r} is not available")

    @cached_property
    def llm_limiter(self) -> TokenBucketLimiter | None:
        """The Redis token bucket shared by every worker using the same API key (None without Redis)."""
        if not self.settings.redis_url:
            return None
        from storage.rate_limit import TokenBucketLimiter

        return TokenBucketLimiter(self.redis, self.settings.redis_prefix)

    def reasoner_for(self, inv_id: str, tenant_id: str, *, daily_limit: int | None = None) -> Reasoner:
        """The reasoner of one investigation: its calls are charged to the investigation's and the
        tenant's Redis token budgets before the next call may start, and synthesis tokens are published
        on the investigation's progress channel. The heuristic provider is returned as is."""
        if self.settings.llm.provider == "heuristic":
            return self.reasoner  # no LLM calls: nothing to charge, nothing to publish
        from adapters.llm.claude_budget import RedisTokenBudget

        limit = self.settings.limits.tenant_daily_llm_tokens if daily_limit is None else daily_limit
        budget = RedisTokenBudget(self.state, inv_id, tenant_id, limit)
        return self.reasoner.bind(
            budget=budget, on_event=lambda event: self.state.publish_progress(inv_id, event)
        )
