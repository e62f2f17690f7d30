"""How Claude writes the cited answer (`ClaudeReasoner.synthesize`, the base it inherits it from): the
stronger model, streamed; citations checked with one repair attempt, uncited sentences removed, and the
extractive fallback (the heuristic's answer, marked as such) when the model gives nothing usable."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.llm.claude_calls import ClaudeCalls, Invalid, LLMOut
from heuristic.sufficiency import has_support
from heuristic.synthesis import direct_answer
from investigation import prompts
from investigation.answers import refusal
from investigation.citations import markers_in, validate
from investigation.guards import citation_problems, strip_uncited
from investigation.state import Answer, Citation, Evidence, Grade, Route, RouteDecision

_FALLBACK_NOTE = "written without the LLM (extractive fallback)"


class ClaudeSynthesis(ClaudeCalls):
    """The answer-writing steps of the Claude reasoner."""

    def synthesize(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        if route.route is Route.DIRECT:
            return self._direct(question, route, evidence)
        if route.route is Route.OUT_OF_CORPUS:
            return refusal(route.reason)
        if not has_support(question, evidence):
            return refusal("no evidence in the knowledge base agrees with the question")
        items = prompts.synthesis_items(evidence)
        try:
            reply = self.call(prompts.synthesis_request(question, items), stream=True)
        except LLMOut as stop:
            return self.finish(stop, "synthesize", lambda: self._extractive(question, route, evidence))
        text = reply.text.strip()
        if reply.stop_reason == "refusal" or not text:
            bad = Invalid("refused" if reply.stop_reason == "refusal" else "invalid_output", "no answer text")
            return self.safe("synthesize", bad, lambda: self._extractive(question, route, evidence),
                             lambda: refusal("the model gave no usable answer"))
        if text.startswith(prompts.REFUSAL_SENTINEL):
            return refusal(text[len(prompts.REFUSAL_SENTINEL):].strip() or "the passages do not answer it")
        caveats = ["the answer was cut short"] if reply.stop_reason == "max_tokens" else []
        problems = citation_problems(text, len(items))
        if problems:
            text, problems = self._repair(question, items, text, problems)
            if text.startswith(prompts.REFUSAL_SENTINEL):
                return refusal(
                    text[len(prompts.REFUSAL_SENTINEL) :].strip() or "the passages do not answer it"
                )
        if problems:
            text, removed = strip_uncited(text, len(items))
            if removed:
                caveats.append(
                    f"{removed} sentence(s) without a valid citation removed after one repair attempt"
                )
        if not any(1 <= m <= len(items) for m in markers_in(text)):
            bad = Invalid("invalid_output", "no cited claim left after the citation check")
            return self.safe("synthesize", bad, lambda: self._extractive(question, route, evidence),
                             lambda: refusal("no answer with valid citations could be written"))
        cited = [evidence[m - 1] for m in markers_in(text) if 1 <= m <= len(items)]
        if not any(e.grade is Grade.CORRECT for e in cited):
            caveats.append("the supporting evidence is weak; verify before relying on it")
        citations = tuple(
            Citation(
                marker=m,
                evidence_id=evidence[m - 1].id,
                source_id=evidence[m - 1].source_id,
                title=evidence[m - 1].title,
            )
            for m in markers_in(text)
            if 1 <= m <= len(items)
        )
        answer = Answer(text=text, citations=citations, caveat="; ".join(caveats) or None)
        return validate(answer, evidence)

    def _repair(self, question: str, items: Sequence[prompts.Fenced], draft: str,
                problems: list[str]) -> tuple[str, list[str]]:
        """One repair attempt; returns the text to keep and the problems it still has."""
        self.emit({"type": "token_reset", "reason": "citation repair"})
        try:
            reply = self.call(prompts.repair_request(question, items, draft, problems), stream=True)
        except LLMOut as stop:
            self.budget.stop(stop.reason, stop.detail)
            self.note("synthesize", kind="llm_fallback", reason=stop.reason, detail=stop.detail)
            return draft, problems
        self.amend_last(repair=True)
        text = reply.text.strip()
        if not text or reply.stop_reason == "refusal":
            return draft, problems
        if text.startswith(prompts.REFUSAL_SENTINEL):
            return text, []
        return text, citation_problems(text, len(items))

    def _direct(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        try:
            reply = self.call(prompts.direct_request(question), stream=True)
        except LLMOut as stop:
            return self.finish(
                stop, "synthesize", lambda: self.fallback.synthesize(question, route, evidence)
            )
        text = reply.text.strip()
        if not text or reply.stop_reason == "refusal" or markers_in(text):
            return self.safe("synthesize", Invalid("invalid_output", "no usable small-talk reply"),
                             lambda: direct_answer(question), lambda: direct_answer(question))
        return Answer(text=text)

    def _extractive(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        answer = self.fallback.synthesize(question, route, evidence)
        if answer.refused:
            return answer
        caveat = f"{answer.caveat}; {_FALLBACK_NOTE}" if answer.caveat else _FALLBACK_NOTE
        return answer.model_copy(update={"caveat": caveat})

