"""The tool steps of a hop: choose the tools a hop calls (under the role policy), call one tool as a
retrieval slot of the hop's chord, and read back the gaps an answer must admit.

Arguments are never task arguments: the tool task gets (investigation, hop, tool name) and re-derives
the arguments from the stored context and question under the policy, so a redelivered task, a Flower
screen or a retrieved passage can neither see nor change them.
"""

from __future__ import annotations

import time
from typing import Any

from adapters.tools.http import HttpToolExecutor
from adapters.tools.outbound import guard_for, guarded_transport
from adapters.tools.registry import StoredTool, by_name, load_tools, unseal
from bootstrap import Services
from investigation.errors import SleuthError, ToolRefused
from investigation.tools.evidence import is_tool_engine, tool_engine, tool_query
from investigation.tools.ownership import agent_notice, check_owner, not_yours_sentence, requester_identity
from investigation.tools.policy import CallScope, check_proposed, refusal, resolve_arguments
from investigation.tools.selection import choose, lacks_question_value, reads_like, relevance, summary_texts
from investigation.tools.tool_use import definitions, validate_tool_use
from storage import repositories as repo
from storage.hits import SlotHits
from storage.models import Investigation
from storage.tool_state import ToolState
from tasks.tool_evidence import add_evidence, related_slots


def _scope(inv: Investigation) -> CallScope:
    return CallScope(route=inv.route or "lookup", audience=inv.audience or "agent", question=inv.question,
                     context=dict(inv.context or {}))


def _event(services: Services, inv_id: str, step_key: str, kind: str, hop: int, **data: Any) -> None:
    with services.session() as session:
        repo.add_event(session, investigation_id=inv_id, step_key=step_key, kind=kind, hop=hop, data=data)


def _state(services: Services) -> ToolState:
    return ToolState(services.redis, services.settings.redis_prefix)


def stored_tools(services: Services, session: Any, *, tenant_id: str) -> list[StoredTool]:
    """The tenant's tools a hop may call, read in the caller's session (none when tools are off): a hop
    planned for a tenant without tools reads this and nothing more (`tasks.steps._plan_hop`)."""
    if services.settings.limits.tools_per_hop <= 0:
        return []
    return load_tools(session, tenant_id=tenant_id)


def plan_tools(services: Services, inv_id: str, hop: int, tools: list[StoredTool]) -> list[dict[str, Any]]:
    """The tools hop `hop` calls: relevant, inside policy, not called before; refusals are traced.
    `tools`: the tenant's tools (`stored_tools`)."""
    limit = services.settings.limits.tools_per_hop
    if limit <= 0 or not tools:
        return []
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        called = {t["name"] for h in repo.list_hops(session, investigation_id=inv_id) if h.number < hop
                  for t in (h.tools or [])}
    scope = _scope(inv)
    askable = [t for t in tools if t.declaration.name not in called
               and not lacks_question_value(scope.question, t.declaration)]
    similarity, summary_similarity = _similarities(services, scope.question, askable)
    leader = reads_like(summary_similarity)
    allowed, refused = [], []
    for tool in askable:
        decl = tool.declaration
        if relevance(scope.question, decl, similarity.get(decl.name),
                     leads_by_summary=decl.name == leader) < 0.3:
            continue  # not a candidate: nothing to refuse
        try:
            reason = refusal(decl, scope)
            if reason:
                raise ToolRefused(decl.name, reason)
            resolve_arguments(decl, scope)
            allowed.append(tool)
        except ToolRefused as exc:
            refused.append({"tool": decl.name, "reason": exc.reason})
    proposals = _model_proposals(services, inv, hop, [t for t in tools if t.declaration.name not in called])
    if proposals is not None:  # an LLM chose: each proposal is checked against schema and policy
        planned: list[dict[str, Any]] = []
        for name, arguments in proposals[:limit]:
            try:
                use = validate_tool_use([t.declaration for t in tools], scope, name, arguments)
                if use.name not in called and all(p["name"] != use.name for p in planned):
                    planned.append({"name": use.name, "relevance": 1.0, "reason": "chosen by the model",
                                    "args": use.args})
            except ToolRefused as exc:
                refused.append({"tool": exc.tool, "reason": f"the model asked: {exc.reason}"})
    else:
        state = _state(services)
        cached = {t.declaration.name for t in allowed if _cached(state, inv.tenant_id, t, scope)}
        chosen = choose(scope.question, hop, [t.declaration for t in allowed], called=called, cached=cached,
                        similarity=similarity, limit=limit, leader=leader)
        planned = [{"name": c.name, "relevance": c.relevance, "reason": c.reason} for c in chosen]
    for item in refused:
        _event(services, inv_id, f"tool-refused:{hop}:{item['tool']}", "tool_refused", hop, **item)
    return planned


def _model_proposals(services: Services, inv: Investigation, hop: int,
                     candidates: list[StoredTool]) -> list[tuple[str, Any]] | None:
    """With an LLM provider: the tool calls it proposes from the policy-filtered definitions (None with
    the heuristic provider, or when the LLM is out)."""
    if services.settings.llm.provider == "heuristic" or not candidates:
        return None
    from adapters.llm.claude_tools import propose_tool_calls
    from tasks.llm_usage import bound_reasoner, record_llm

    scope = _scope(inv)
    offered = definitions([t.declaration for t in candidates], scope)
    if not offered:
        return []
    with services.session() as session:
        reasoner = bound_reasoner(services, session, inv)
    proposals = propose_tool_calls(reasoner, scope.question, offered)
    record_llm(services, inv.id, reasoner, "tools", hop)
    return proposals


def _similarities(services: Services, question: str,
                  tools: list[StoredTool]) -> tuple[dict[str, float], dict[str, float]]:
    """Cosine similarity (the local embedder) of the question and each tool's description or closest
    `examples:` question, and of the question and each tool's closest summary sentence (`reads_like`)."""
    from adapters.search.embedder import embed_matrix

    owners: list[tuple[str, bool]] = []
    texts = [question]
    for t in tools:
        decl = t.declaration
        for text in (f"{decl.display_name}: {decl.description}", *decl.examples):
            owners.append((decl.name, False))
            texts.append(text)
        for text in summary_texts(decl):
            owners.append((decl.name, True))
            texts.append(text)
    if not owners:
        return {}, {}
    matrix = embed_matrix(services.embedder, texts, persist=False)
    best: dict[str, float] = {}
    summary: dict[str, float] = {}
    for (name, of_summary), score in zip(owners, matrix[1:] @ matrix[0], strict=True):
        into = summary if of_summary else best
        into[name] = max(into.get(name, -1.0), float(score))
    return best, summary


def _digest(tool: StoredTool, args: dict[str, Any], scope: CallScope) -> str:
    """The cache key of a call: who asks and for which audience, not only what is asked, so no cached
    result is ever served to another requester."""
    return ToolState.digest(
        tool.revision, args, scope.audience, requester_identity(tool.declaration, scope.context)
    )


def _cached(state: ToolState, tenant: str, tool: StoredTool, scope: CallScope) -> bool:
    try:
        args = resolve_arguments(tool.declaration, scope)
    except ToolRefused:
        return False
    return state.cached(tenant, tool.declaration.name, _digest(tool, args, scope))


def tool_slots(tools: list[dict[str, Any]]) -> tuple[tuple[int, str], ...]:
    """The chord slots of a hop's tools: (0, "tool:<name>")."""
    return tuple((0, tool_engine(str(t["name"]))) for t in tools)


def planned_args(services: Services, inv_id: str, hop: int, name: str) -> dict[str, Any] | None:
    """The arguments a model proposed for this tool in this hop (None: derive them from the context)."""
    with services.session() as session:
        row = repo.get_hop(session, investigation_id=inv_id, number=hop)
    for entry in (row.tools if row is not None else []) or []:
        if entry.get("name") == name and isinstance(entry.get("args"), dict):
            return dict(entry["args"])
    return None


def call_tool(services: Services, inv_id: str, hop: int, name: str) -> dict[str, Any]:
    """One tool call of a hop. Its projected result (or its error) is parked in Redis for the reducer."""
    slot = f"0:{tool_engine(name)}"
    stored = services.state.load_hit(inv_id, hop, slot)
    if stored is not None:
        return {"slot": slot, "hits": len(stored.passages), "error": stored.error}
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        tenant = repo.get_tenant(session, tenant_id=inv.tenant_id)
        tool = by_name(load_tools(session, tenant_id=inv.tenant_id)).get(name)
        allow_hosts = list(tenant.allowed_hosts or [])
    scope = _scope(inv)
    # Its own "query": a tool result is ranked as the leader of its own group, not against the documents.
    payload: dict[str, Any] = {"passages": (), "error": None, "cached": False}
    trace: dict[str, Any] = {"tool": name, "status_code": None, "attempts": 0}
    started = time.perf_counter()
    try:
        if tool is None:
            raise ToolRefused(name, "the tool was removed")
        decl = tool.declaration
        # The policy again, at call time: never trust the plan alone. A model's arguments are re-checked.
        chosen = planned_args(services, inv_id, hop, name)
        args = check_proposed(decl, scope, chosen) if chosen is not None else resolve_arguments(decl, scope)
        trace["args"] = args
        state = _state(services)
        digest = _digest(tool, args, scope)
        cached = state.cache_get(inv.tenant_id, name, digest)
        document, fetched_ts = (cached.document, cached.fetched_at) if cached is not None else (None, None)
        if cached is not None:
            payload["cached"] = True
        elif time.time() > services.state.usage(inv_id).get("deadline_ts", float("inf")):
            payload["error"] = "deadline"
        elif not services.state.charge(inv_id, "retrieval_calls", 1):
            payload["error"] = "retrieval_budget"
        elif not state.allow(inv.tenant_id, name):
            payload["error"] = "circuit open after repeated failures"
        else:
            guard = guard_for(allow_hosts, allow_private=services.settings.security.tools_allow_private)
            fetched_ts = state.clock()
            result = HttpToolExecutor(transport=guarded_transport(guard)).call(
                decl, args, secret=unseal(services.settings, tool))
            trace.update(status_code=result.status_code, attempts=result.attempts)
            if result.ok or result.retryable:
                trace["breaker"] = state.record(inv.tenant_id, name, ok=result.ok)
            if result.ok and result.document is not None:
                document = result.document
                state.cache_set(inv.tenant_id, name, digest, document, decl.cache_ttl, fetched_at=fetched_ts)
            elif result.status_code == 404 and decl.question_params:
                # No such record answers like another customer's record: the answer never tells a
                # requester whether an order number they do not own exists.
                trace["refused"] = trace["reason"] = "no record for the value named in the question"
                trace["not_yours"] = not_yours_sentence(decl, args)
                payload["error"] = "refused: no record for the value named in the question"
            else:
                payload["error"] = result.error
        if document is not None and fetched_ts is not None:
            # Whose record it is, on every result (a cache hit too), before anything of it is evidence.
            verdict = check_owner(decl, document, scope.context, scope.audience)
            if verdict.reason is not None:
                trace["owner"] = verdict.reason
            if verdict.document is None:
                trace["refused"] = trace["reason"] = verdict.reason
                trace["not_yours"] = not_yours_sentence(decl, args)
                payload["error"] = f"refused: {verdict.reason}"
            else:
                add_evidence(services, inv, hop, decl, scope, args, verdict.document, fetched_ts,
                          agent_notice(verdict), payload, trace)
    except ToolRefused as exc:
        payload["error"] = f"refused: {exc.reason}"
        trace["refused"] = trace["reason"] = exc.reason
    except SleuthError as exc:  # e.g. a secret that no longer decrypts: a gap, not a crash
        payload["error"] = f"{type(exc).__name__}: {exc}"
    hits = SlotHits(query=tool_query(tool_engine(name)), engine=tool_engine(name), tool=name,
                    ms=round((time.perf_counter() - started) * 1000, 2), **payload)
    services.state.store_hits(inv_id, hop, slot, hits)
    _event(services, inv_id, f"tool:{hop}:{name}", "tool_refused" if "refused" in trace else "tool_call", hop,
           ms=hits.ms, cached=hits.cached, error=hits.error, **trace)
    if "owner" in trace and "refused" not in trace and scope.audience != "agent":
        # Some records of a list were dropped: the call itself is evidence, the drop a traced refusal.
        _event(
            services,
            inv_id,
            f"tool-owner:{hop}:{name}",
            "tool_refused",
            hop,
            tool=name,
            reason=trace["owner"],
        )
    return {"slot": slot, "hits": len(hits.passages), "error": hits.error}


def gaps(services: Services, inv_id: str) -> list[str]:
    """The sentences an answer adds for tool calls that failed, and for a named item that is not the
    requester's ("I can't look up order X for your account"); other refusals are traced, not admitted."""
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        events = [e for e in repo.list_events(session, investigation_id=inv_id)
                  if e.kind == "tool_call" or e.data.get("not_yours")]
        tools = by_name(load_tools(session, tenant_id=inv.tenant_id))
    out = []
    for event in events:
        error = event.data.get("error")
        name = str(event.data.get("tool"))
        if event.data.get("not_yours"):
            out.append(str(event.data["not_yours"]))
        if event.kind == "tool_refused":
            continue
        if error and name in tools:
            out.append(tools[name].declaration.gap_sentence(str(error)))
        elif error:
            out.append(f"I could not reach the {name.replace('_', ' ')} system ({error}).")
    return out


__all__ = ["call_tool", "gaps", "is_tool_engine", "plan_tools", "related_slots", "stored_tools", "tool_query",
           "tool_slots"]
