"""The library internals Sleuth leans on, pinned: each is used for speed, so a library upgrade that changes
one must fail here, by name, rather than silently fall back or break at run time. pyproject.toml pins the
versions these were checked on; a new version is taken once this file passes with it.

- kombu (`workers.publishing`): `kombu.transport._transport_cache` is emptied when the Redis schemes are
mapped
  to `PublisherTransport`; `Channel._put`/`_put_fanout` are overridden to pass kombu's own `_publish_batch`
  (its publish-batch branch collects `add(command, *args)` instead of sending); `conn_or_acquire` and
  `_create_client` are overridden/called to keep one client per channel.
- SQLAlchemy (`storage._prepared`): `Compiled.construct_params(params)` builds a prepared statement's
  parameters; `set_committed_value` loads a row's columns without marking them changed.
- SQLAlchemy's SQLite dialect (`storage.db._Writers`): `do_commit`, `do_rollback`, `do_close`, `do_terminate`
  are wrapped, so a writer's turn ends when its transaction has.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version

import kombu.transport
import pytest
from kombu.transport import redis as kombu_redis
from packaging.specifiers import SpecifierSet
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import Compiled
from sqlalchemy.orm import attributes

CHECKED = {"kombu": SpecifierSet(">=5.7,<5.8"), "sqlalchemy": SpecifierSet(">=2.0.28,<2.2")}


def _parameters(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize("library", sorted(CHECKED))
def test_the_installed_version_is_one_these_internals_were_checked_on(library: str) -> None:
    assert version(library) in CHECKED[library], (
        f"{library} {version(library)} is outside {CHECKED[library]}: check the internals below, then widen "
        "the pin"
    )


def test_kombus_transport_cache_and_aliases() -> None:
    assert isinstance(kombu.transport._transport_cache, dict)
    # (Mapped to `PublisherTransport` once a process has built the Celery app; kombu's own class before.)
    assert {"redis", "rediss"} <= kombu.transport.TRANSPORT_ALIASES.keys()
    assert callable(kombu.transport.resolve_transport)


def test_kombus_redis_channel_publishes_into_a_batch_it_is_handed() -> None:
    channel = kombu_redis.Channel
    assert _parameters(channel._put) == ["self", "queue", "message", "kwargs"]
    assert _parameters(channel._put_fanout) == ["self", "exchange", "message", "routing_key", "kwargs"]
    for method in (channel._put, channel._put_fanout):
        source = inspect.getsource(method)
        assert "kwargs.pop('_publish_batch'" in source and "publish_batch.add(" in source, method.__name__
    assert _parameters(channel.conn_or_acquire) == ["self", "client"]
    assert _parameters(channel._create_client) == ["self", "asynchronous"]


def test_sqlalchemys_compiled_parameters_and_committed_values() -> None:
    assert _parameters(Compiled.construct_params)[:2] == ["self", "params"]
    assert _parameters(attributes.set_committed_value) == ["instance", "key", "value"]


def test_the_sqlite_dialect_ends_a_transaction_through_the_calls_wrapped() -> None:
    for name in ("do_commit", "do_rollback", "do_close", "do_terminate"):
        assert _parameters(getattr(SQLiteDialect_pysqlite, name)) == ["self", "dbapi_connection"], name
