"""Redis URLs as each client spells them (redis-py, Celery/kombu), and a redis-py client for any of them."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import redis


def client_from_url(url: str, **kwargs: Any) -> redis.Redis:
    """A redis-py client for any URL Sleuth accepts, including Celery/kombu's ``redis+socket://``."""
    return redis.Redis.from_url(redis_py_url(url), **kwargs)


def redis_py_url(url: str) -> str:
    """The same server as redis-py spells it: Celery/kombu's ``redis+socket://`` is ``unix://`` with the
    database as ``db`` (the inverse of `kombu_url`)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis+socket", "socket"):
        return url
    query = parse_qs(parts.query)
    db = (query.pop("virtual_host", None) or query.pop("db", None) or ["0"])[0]
    rest = {key: values[0] for key, values in query.items()}
    return f"unix://{parts.path}?{urlencode({'db': db, **rest})}"


def kombu_url(url: str) -> str:
    """The same server as Celery/kombu spells it: a unix socket is ``redis+socket://`` with the database
    as ``virtual_host`` (the inverse of `redis_py_url`)."""
    parts = urlsplit(url)
    if parts.scheme != "unix":
        return url
    query = parse_qs(parts.query)
    db = (query.pop("db", None) or ["0"])[0]
    rest = {key: values[0] for key, values in query.items()}
    return f"redis+socket://{parts.path}?{urlencode({'virtual_host': db, **rest})}"
