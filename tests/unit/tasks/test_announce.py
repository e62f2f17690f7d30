"""A worker's announcement that an investigation finished (`tasks.celery_tasks._announce_finished`) is a hint
for
the API's long polls: Redis refusing it, or answering with an error, never fails the step that finished."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
import redis

from storage.redis_state import RedisState, client_from_url


class _Refusing(redis.Redis):
    """A real client whose PUBLISH the server answers with an error (as a read-only replica or an ACL
    would)."""

    def publish(self, channel: object, message: object, **kwargs: object) -> int:
        raise redis.ResponseError("READONLY You can't write against a read only replica.")


@pytest.mark.parametrize("client", [
    client_from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1),  # nothing listens: refused
    _Refusing.from_url("redis://127.0.0.1:1/0"),
], ids=["unreachable", "error-reply"])
def test_an_announcement_redis_refuses_is_logged_not_raised(client: redis.Redis,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    from tasks.celery_tasks import _announce_finished

    services = SimpleNamespace(state=RedisState(client, "t-announce"))
    with caplog.at_level(logging.WARNING):
        _announce_finished(services, "inv-1")  # returns: the step goes on to send its deliveries
    assert any("could not announce that inv-1 finished" in r.getMessage() for r in caplog.records)
