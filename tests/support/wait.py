"""Polling without timed assertions: wait for a condition, up to a generous limit, and say whether it held."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout: float = 30.0, interval: float = 0.1) -> bool:
    """True as soon as `predicate()` is truthy; False if it is still falsy after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
