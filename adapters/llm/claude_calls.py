"""The call discipline every Claude decision follows: budget check → request → charge → record → parse.

A reply only becomes a decision when it is one call of the ONE tool offered, with input that validates
against its pydantic model; anything else (text, a refusal, another tool's name, malformed input) is
`Invalid` and the caller takes its safe fallback. When the LLM is out (budget or retries), `LLMOut` says
why and `finish` hands the step to the heuristic — or fails it when no fallback is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from adapters.llm.claude_budget import NoBudget, TokenBudget
from adapters.llm.claude_transport import MessagesTransport, Reply, estimate_tokens
from investigation.errors import BudgetExceeded, LLMUnavailable
from investigation.guards import rejected_tools
from investigation.ports import Reasoner
from investigation.prompts import PromptSpec
from investigation.state import StopReason
from investigation.usage import LLMUsage, UsageKind

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
Events = Callable[[dict[str, Any]], None]


class LLMOut(Exception):
    """The LLM may not or cannot be called any more for this investigation (`reason` in `LLM_STOPS`)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Invalid(Exception):
    """A reply that must not drive any action; `kind` is refused | rejected_tool | invalid_output."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def parse_tool(reply: Reply, tool: str, model: type[M]) -> M:
    """The input of the single call of `tool` in `reply`, validated; raises Invalid otherwise."""
    if reply.stop_reason == "refusal":
        raise Invalid("refused", "the model declined to answer")
    calls = reply.tool_uses
    rejected = rejected_tools([str(c.get("name")) for c in calls], {tool})
    if rejected:
        raise Invalid("rejected_tool", f"tool call(s) outside the allowed set: {', '.join(rejected)[:200]}")
    if not calls:
        raise Invalid(
            "invalid_output", f"no {tool} call (stop_reason {reply.stop_reason}): {reply.text[:200]}"
        )
    if len(calls) > 1:
        raise Invalid("invalid_output", f"{len(calls)} calls of {tool}, expected one")
    try:
        return model.model_validate(calls[0].get("input"))
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        raise Invalid("invalid_output", f"tool input does not match the schema: {errors}"[:300]) from exc


def total_tokens(usage: dict[str, int]) -> int:
    """Every token a call was billed for (cache reads and writes are input tokens too)."""
    return sum(usage.values())


class ClaudeCalls:
    """State shared by a reasoner's calls: transport, models, fallback, budget, usage log, events."""

    name = "anthropic"

    def __init__(self, transport: MessagesTransport, *, model_fast: str, model_synthesis: str,
                 fallback: Reasoner, fallback_mode: str = "heuristic", effort_fast: str | None = "low",
                 effort_synthesis: str | None = "medium", budget: TokenBudget | None = None,
                 on_event: Events | None = None) -> None:
        if fallback_mode not in ("heuristic", "none"):
            raise ValueError("fallback_mode must be heuristic or none")
        self.transport = transport
        self.model_fast = model_fast
        self.model_synthesis = model_synthesis
        self.effort_fast = effort_fast
        self.effort_synthesis = effort_synthesis
        self.fallback = fallback
        self.fallback_mode = fallback_mode
        self.budget: TokenBudget = budget or NoBudget()
        self.on_event = on_event
        self._usage: list[LLMUsage] = []

    def take_usage(self) -> list[LLMUsage]:
        taken, self._usage = self._usage, []
        return taken

    def amend_last(self, **details: Any) -> None:
        """Add step-specific details (grading counts, a repair) to the record of the last call."""
        self._usage[-1] = LLMUsage.model_validate(
            {**self._usage[-1].model_dump(exclude_unset=True), **details}
        )

    def emit(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def note(self, step: str, *, kind: UsageKind, reason: str, detail: str, **extra: Any) -> None:
        """A zero-token record in the usage log (fallbacks and guard rejections are traced like calls)."""
        self._usage.append(
            LLMUsage.model_validate(
                {
                    "kind": kind,
                    "step": step,
                    "model": self.fallback.name,
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "fallback": kind == "llm_fallback",
                    "reason": reason,
                    "detail": detail[:300],
                    **extra,
                }
            )
        )

    def call(self, spec: PromptSpec, *, stream: bool = False) -> Reply:
        """Send `spec` if the budget allows; charge and record its usage. Raises LLMOut."""
        stopped = self.budget.stopped()
        if stopped is not None:
            raise LLMOut(*stopped)
        try:
            self.budget.check(estimate_tokens(spec))
        except BudgetExceeded as exc:
            raise LLMOut(StopReason.TOKEN_BUDGET, str(exc)) from exc
        fast = spec.role == "fast"
        model = self.model_fast if fast else self.model_synthesis
        on_text = (lambda delta, attempt: self.emit({"type": "token", "text": delta, "attempt": attempt})) \
            if stream else None
        try:
            reply = self.transport.send(
                spec, model, effort=self.effort_fast if fast else self.effort_synthesis, on_text=on_text
            )
        except LLMUnavailable as exc:
            raise LLMOut(StopReason.LLM_UNAVAILABLE, str(exc)) from exc
        self.budget.charge(total_tokens(reply.usage))
        self._usage.append(LLMUsage.model_validate({
            "kind": "llm_call", "step": spec.step, "model": reply.model or model, **reply.usage,
            "fallback": False, "attempts": reply.attempts, "waited_s": round(reply.waited, 3),
            "stop_reason": reply.stop_reason}))
        return reply

    def decide(self, spec: PromptSpec, model: type[M]) -> M:
        """The typed decision of one tool call. Raises LLMOut or Invalid (recorded by the caller)."""
        assert spec.tool is not None
        return parse_tool(self.call(spec), str(spec.tool["name"]), model)

    def finish(self, stop: LLMOut, step: str, heuristic: Callable[[], T]) -> T:
        """The LLM is out: remember it for the investigation, then let the heuristic do the step (or fail)."""
        self.budget.stop(stop.reason, stop.detail)
        self.note(step, kind="llm_fallback", reason=stop.reason, detail=stop.detail)
        if self.fallback_mode == "heuristic":
            return heuristic()
        if stop.reason == StopReason.TOKEN_BUDGET:
            raise BudgetExceeded("llm_tokens", stop.detail)
        raise LLMUnavailable(stop.detail)

    def safe(self, step: str, bad: Invalid, heuristic: Callable[[], T], default: Callable[[], T]) -> T:
        """Unusable output: the heuristic's decision (or the conservative default), traced as a fallback."""
        self.note(step, kind="llm_fallback", reason=bad.kind, detail=bad.detail)
        return heuristic() if self.fallback_mode == "heuristic" else default()
