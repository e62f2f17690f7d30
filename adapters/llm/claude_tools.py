"""Claude chooses among the tenant's tools: one Messages call offering the policy-allowed tool-use
definitions; the tool_use blocks it returns are only proposals (the caller validates them against the
schema and the policy before any call). When the LLM is out, None: the heuristic choice applies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adapters.llm.claude_calls import ClaudeCalls, LLMOut
from investigation.tools.tool_use import tool_choice_request


def propose_tool_calls(reasoner: object, question: str,
                       offered: Sequence[dict[str, Any]]) -> list[tuple[str, Any]] | None:
    """(tool name, input) of each tool_use the model returned; None when `reasoner` is not Claude or the
    LLM is out (budget, retries)."""
    if not isinstance(reasoner, ClaudeCalls) or not offered:
        return None
    try:
        reply = reasoner.call(tool_choice_request(question, offered))
    except LLMOut as stop:
        reasoner.note("tools", kind="llm_fallback", reason=stop.reason, detail=stop.detail)
        return None
    return [(str(use.get("name")), use.get("input")) for use in reply.tool_uses]
