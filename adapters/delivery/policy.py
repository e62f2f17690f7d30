"""The delivery retry policy is the shared `adapters.backoff.Backoff` (retry-after clamped to the cap)."""

from adapters.backoff import Backoff

BackoffPolicy = Backoff

__all__ = ["Backoff", "BackoffPolicy"]
