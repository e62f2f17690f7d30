"""Shared fixtures of the Claude provider tests that also reach Redis or a worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.messages_api import FakeMessagesAPI


@pytest.fixture()
def messages_api() -> Iterator[FakeMessagesAPI]:
    """A local Messages API server with no brain: every reply is scripted by the test."""
    with FakeMessagesAPI() as server:
        yield server
