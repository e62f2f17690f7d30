"""Sending one Messages API request: shared rate limit, bounded retries honouring retry-after, streaming,
and the translation of SDK errors and usage blocks into Sleuth's terms.

The SDK's own retries are off (max_retries=0): this module owns the retry policy, so every wait is
bounded, jittered and counted. Errors leave as `LLMUnavailable` (a PermanentError for the task: retrying
the whole task would only repeat the same calls).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic

from adapters.backoff import Backoff
from investigation.errors import LLMUnavailable, TransientError
from investigation.prompts import PromptSpec
from investigation.text import count_tokens

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def claude_retry_policy(max_retries: int = 3, base: float = 1.0, max_delay: float = 20.0) -> Backoff:
    """The Claude retry policy: `max_retries` retries after the first attempt; a retry-after longer than
    `max_delay` gives up (a worker is blocked in this call)."""
    return Backoff(base=base, cap=max_delay, max_attempts=max_retries + 1, long_retry_after="give_up")


class Limiter(Protocol):
    def acquire(self, key: str, costs: Mapping[str, float], per_minute: Mapping[str, float], *,
                max_wait: float, sleep: Callable[[float], None] = ...) -> float: ...

    def debit(self, key: str, bucket: str, amount: float, per_minute: float) -> float: ...


@dataclass(frozen=True)
class RateLimits:
    """Per-minute limits of one API key (0 = unlimited) and the longest a caller may wait for them."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    max_wait: float = 30.0

    def per_minute(self) -> dict[str, float]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass
class Reply:
    """What came back: content blocks as plain dicts, why it stopped, and the billed usage."""

    blocks: list[dict[str, Any]]
    stop_reason: str | None
    model: str
    usage: dict[str, int]
    attempts: int = 1
    waited: float = 0.0
    request_id: str | None = None

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.blocks if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.blocks if b.get("type") == "tool_use"]


def estimate_tokens(spec: PromptSpec) -> int:
    """A model-free upper-ish estimate of a request's input tokens (for budgets and the limiter)."""
    tool = str(spec.tool) if spec.tool else ""
    return int(1.4 * (count_tokens(spec.system) + count_tokens(spec.user) + count_tokens(tool))) + 50


def usage_of(usage: Any) -> dict[str, int]:
    """The usage block as four integers (absent cache fields are 0)."""
    def get(name: str) -> int:
        value = getattr(usage, name, None) if usage is not None else None
        return int(value or 0)

    return {"input_tokens": get("input_tokens"), "output_tokens": get("output_tokens"),
            "cache_read_input_tokens": get("cache_read_input_tokens"),
            "cache_creation_input_tokens": get("cache_creation_input_tokens")}


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    headers = exc.response.headers if exc.response is not None else {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) / scale)
        except ValueError:
            continue
    return None


def _spend_limit(exc: anthropic.APIStatusError) -> bool:
    """A 429 that means the account's spend cap is reached: waiting minutes will not help."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    details = error.get("details") if isinstance(error, dict) else None
    return isinstance(details, dict) and details.get("error_code") == "enforced_spend_limit_reached"


@dataclass
class MessagesTransport:
    """One SDK client per process; `send` turns a `PromptSpec` into a Messages API request."""

    client: anthropic.Anthropic
    policy: Backoff = field(default_factory=claude_retry_policy)
    limiter: Limiter | None = None
    key: str = "default"
    limits: RateLimits = field(default_factory=RateLimits)
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random

    def params(self, spec: PromptSpec, model: str, effort: str | None) -> dict[str, Any]:
        """The request body: stable (tools, system) prefix marked for caching, untrusted text in `messages`.

        No temperature and no prefill (current models reject both); tool_choice is `auto` because they
        reject forced tool use too — a reply without the tool call is invalid output, handled by the caller.
        """
        params: dict[str, Any] = {
            "model": model, "max_tokens": spec.max_tokens,
            "system": [{"type": "text", "text": spec.system, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": spec.user}],
        }
        if spec.tool is not None:
            params["tools"] = [spec.tool]
            params["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        elif spec.tools:  # the tenant's declared tools: the model may call none, one or several
            params["tools"] = list(spec.tools)
            params["tool_choice"] = {"type": "auto"}
        if effort:
            params["output_config"] = {"effort": effort}
        return params

    def send(self, spec: PromptSpec, model: str, *, effort: str | None = None,
             on_text: Callable[[str, int], None] | None = None) -> Reply:
        """The reply, after at most `policy.max_attempts` attempts. `on_text(delta, attempt)` streams text."""
        params = self.params(spec, model, effort)
        estimate = estimate_tokens(spec)
        waited = 0.0
        last = ""
        for attempt in range(1, self.policy.max_attempts + 1):
            retry_after: float | None = None
            try:
                if self.limiter is not None:
                    waited += self.limiter.acquire(
                        self.key, {"requests": 1, "input_tokens": estimate}, self.limits.per_minute(),
                        max_wait=self.limits.max_wait, sleep=self.sleep)
                reply = self._once(params, on_text, attempt)
                reply.attempts, reply.waited = attempt, waited
                if self.limiter is not None:
                    self.limiter.debit(self.key, "output_tokens", reply.usage["output_tokens"],
                                       self.limits.output_tokens)
                return reply
            except anthropic.APIStatusError as exc:
                if exc.status_code not in RETRYABLE_STATUS or (exc.status_code == 429 and _spend_limit(exc)):
                    raise LLMUnavailable(
                        f"{exc.status_code} {type(exc).__name__}: {exc.message}"[:300]
                    ) from exc
                retry_after = _retry_after(exc)
                last = f"{exc.status_code} {type(exc).__name__}"
            except anthropic.APIConnectionError as exc:  # includes APITimeoutError
                last = type(exc).__name__
            except (ValueError, anthropic.APIResponseValidationError) as exc:  # a body that is not a message
                last = f"malformed response ({type(exc).__name__})"
            except TransientError as exc:  # the shared limiter said wait longer than we may
                last, retry_after = f"rate limiter: {exc}", None
            delay = self.policy.delay(attempt, retry_after, self.rand)
            if delay is None:
                break
            self.sleep(delay)
            waited += delay
        raise LLMUnavailable(f"gave up after {attempt} attempt(s): {last}"[:300])

    def _once(
        self, params: dict[str, Any], on_text: Callable[[str, int], None] | None, attempt: int
    ) -> Reply:
        if on_text is None:
            message = self.client.messages.create(**params)
        else:
            with self.client.messages.stream(**params) as stream:
                for event in stream:
                    if event.type == "text":
                        on_text(event.text, attempt)
                message = stream.get_final_message()
        blocks = [block.model_dump(mode="json", warnings=False) for block in message.content]
        return Reply(blocks=blocks, stop_reason=message.stop_reason, model=str(message.model),
                     usage=usage_of(message.usage), request_id=getattr(message, "_request_id", None))


def make_client(*, api_key: str, base_url: str | None, timeout: float) -> anthropic.Anthropic:
    """The SDK client: our retry policy replaces its own; connecting may take at most 5 s."""
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0,
                               timeout=anthropic.Timeout(timeout, connect=min(5.0, timeout)))
