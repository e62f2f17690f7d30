"""The one error tree of Sleuth. Adapters translate SDK errors into it; the API maps it to HTTP codes.

    SleuthError
    ├── TransientError          retried with backoff (network blips, 5xx, 429)
    │   └── ReceiverUnavailable a delivery receiver did not take it; may say `uncertain`
    ├── PermanentError          fail fast, never retried
    │   ├── ReceiverRejected    a delivery receiver refused it, or the target is unusable
    │   ├── ValidationFailed    bad input; names the field
    │   ├── PayloadTooLarge     input over a size limit
    │   ├── Conflict            an idempotency key reused for a different request
    │   └── LLMUnavailable      the LLM cannot answer now (retries exhausted, or unfixable by retrying)
    ├── BudgetExceeded          a hop / call / token / deadline budget ran out
    │   └── TooManyRequests     a tenant's intake rate limit; says when to retry
    ├── NotFound                no such thing (or it belongs to another tenant)
    └── Forbidden               authenticated but not allowed (or not authenticated)
        └── ToolRefused         a tool call outside the tenant's tool policy
"""

from __future__ import annotations


class SleuthError(Exception):
    """Base of every error Sleuth raises on purpose."""


class TransientError(SleuthError):
    """Raised when a retry may succeed (timeouts, connection errors, 5xx, 429)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ReceiverUnavailable(TransientError):
    """Raised when a delivery receiver timed out, could not be reached, or answered 5xx / 408 / 429 (or an
    SMTP 4xx deferral); `status_code` is its answer, `uncertain` that the send may have happened anyway."""

    def __init__(self, message: str, *, status_code: int | None = None,
                 retry_after: float | None = None, uncertain: bool = False) -> None:
        super().__init__(message, retry_after=retry_after)
        self.status_code = status_code
        self.uncertain = uncertain


class PermanentError(SleuthError):
    """Raised when retrying cannot help (bad request, bad configuration)."""


class ReceiverRejected(PermanentError):
    """Raised when a delivery receiver answered a status retrying cannot fix, or the target is unusable."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ValidationFailed(PermanentError):
    """Raised when input is invalid; `field` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class PayloadTooLarge(PermanentError):
    """Raised when an input exceeds its size limit."""


class Conflict(PermanentError):
    """Raised when an idempotency key is reused with a different request (the Stripe behaviour: 409)."""


class LLMUnavailable(PermanentError):
    """Raised when the LLM cannot answer now: retries exhausted, or an error retrying cannot fix."""

    reason = "llm_unavailable"


class BudgetExceeded(SleuthError):
    """Raised when an investigation or tenant budget (hops, calls, tokens, deadline) is exhausted."""

    def __init__(self, budget: str, message: str = "") -> None:
        super().__init__(message or f"budget exceeded: {budget}")
        self.budget = budget


class TooManyRequests(BudgetExceeded):
    """Raised when a tenant submits faster than its intake rate limit; `retry_after` is in seconds."""

    def __init__(self, budget: str, message: str, *, retry_after: float) -> None:
        super().__init__(budget, message)
        self.retry_after = retry_after


class NotFound(SleuthError):
    """Raised when a thing does not exist or belongs to another tenant."""


class Forbidden(SleuthError):
    """Raised when the caller is not authenticated or not allowed."""


class ToolRefused(Forbidden):
    """Raised when a tool call is outside the tenant's policy (route, audience, requester, arguments)."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"tool {tool} refused: {reason}")
        self.tool = tool
        self.reason = reason
