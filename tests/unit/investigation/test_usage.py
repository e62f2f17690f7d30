"""LLM usage records: validated where a reasoner writes them, traced with the keys the provider set."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from investigation.usage import LLMUsage

TOKENS = {
    "input_tokens": 120,
    "output_tokens": 30,
    "cache_read_input_tokens": 400,
    "cache_creation_input_tokens": 0,
}


def test_a_call_is_traced_with_exactly_the_keys_it_was_given_but_kind() -> None:
    call = LLMUsage.model_validate(
        {
            "kind": "llm_call",
            "step": "grade",
            "model": "claude-haiku-5-5",
            **TOKENS,
            "fallback": False,
            "attempts": 1,
            "waited_s": 0.0,
            "stop_reason": "tool_use",
        }
    )
    assert call.trace_data() == {"step": "grade", "model": "claude-haiku-5-5", **TOKENS, "fallback": False,
                                 "attempts": 1, "waited_s": 0.0, "stop_reason": "tool_use"}
    assert call.input_total == 520 and call.output_tokens == 30


def test_a_fallback_note_has_zero_tokens_and_its_reason() -> None:
    note = LLMUsage(
        kind="llm_fallback",
        step="judge",
        model="heuristic",
        fallback=True,
        reason="token_budget",
        detail="over budget",
    )
    assert note.input_total == note.output_tokens == 0
    assert note.trace_data() == {"step": "judge", "model": "heuristic", "fallback": True,
                                 "reason": "token_budget", "detail": "over budget"}


def test_unknown_fields_and_kinds_are_refused() -> None:
    with pytest.raises(ValidationError):
        LLMUsage.model_validate({"step": "grade", "model": "m", "tokens": 3})
    with pytest.raises(ValidationError):
        LLMUsage.model_validate({"kind": "llm_chat", "step": "grade", "model": "m"})
    with pytest.raises(ValidationError):
        LLMUsage.model_validate({"step": "grade", "model": "m", "input_tokens": "many"})
