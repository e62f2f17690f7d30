"""A step that decides a hop's queries starts embedding them at once (`Services.prepare_queries`), before it
writes the hop, so the model runs while the step writes and the hop is dispatched. In one process
(`Services(one_process=True)`: the in-process executor) query vectors are not copied through Redis, where
no other process would read them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.search.embedder import MiniLMEmbedder, RedisVectors
from app.intake import parse_request, submit_investigation
from bootstrap import Services
from storage import repositories as repo
from tasks import inline
from tests.support.stack import Stack, build_stack

# Two hops on the stack's corpus: the plan's sub-queries, then a follow-up query.
QUESTION = "Which plan includes SCIM provisioning, and which region keeps customer data inside Germany?"


def _submit(stack: Stack, services: Services) -> str:
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
    return submit_investigation(services, tenant=tenant, request=parse_request({"question": QUESTION}),
                                launch=lambda _i: None).id


def test_each_hops_queries_are_prepared_before_the_hop_is_written(tmp_path: Path, redis_url: str,
                                                                  redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    services = Services(stack.settings, one_process=True)
    embedder = services.embedder
    assert isinstance(embedder, MiniLMEmbedder)
    inv_id = _submit(stack, services)
    real = embedder.prepare
    prepared: list[tuple[int, list[str]]] = []  # (hops written at that moment, the queries)

    def recording(texts: Sequence[str]) -> None:
        with services.session() as session:
            prepared.append((len(repo.list_hops(session, investigation_id=inv_id)), list(texts)))
        real(texts)

    embedder.prepare = recording  # type: ignore[method-assign]
    inline.run(services, inv_id, deliver=False)
    with services.session() as session:
        hops = repo.list_hops(session, investigation_id=inv_id)
        assert repo.get_investigation(session, investigation_id=inv_id).status == "answered"
    assert len(hops) >= 2
    # The question first, as soon as `start` has it (hop 1 always searches it), then each hop's queries.
    assert prepared == [(0, [QUESTION])] + [(h.number - 1, [str(q["text"]) for q in h.queries]) for h in hops]
    assert all(embedder._key(str(q["text"])) in embedder._lru for h in hops for q in h.queries)


@pytest.mark.parametrize("in_process", [True, False])
def test_an_in_process_run_embeds_its_question_while_the_intake_writes(
    tmp_path: Path, redis_url: str, redis_prefix: str, in_process: bool
) -> None:
    """`create_and_launch(in_process=True)` (bench, `sleuth ask` without a queue): the question's embedding
    starts before the intake has written anything; the start step then finds it started, and the model runs
    on the question once. Without it, the first query prepared is the question, by the start step."""
    from cli.commands import create_and_launch

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    services = Services(stack.settings, one_process=True)
    embedder = services.embedder
    assert isinstance(embedder, MiniLMEmbedder)
    real_prepare, real_infer = embedder.prepare, embedder._infer
    prepared: list[tuple[int, list[str]]] = []  # (investigations written at that moment, the queries)
    embedded: list[str] = []

    def recording(texts: Sequence[str]) -> None:
        with services.session() as session:
            prepared.append((repo.count_active(session, tenant_id=stack.tenant_id), list(texts)))
        real_prepare(texts)

    def counting(model: Any, texts: list[str]) -> Any:
        embedded.extend(texts)
        return real_infer(model, texts)

    embedder.prepare = recording  # type: ignore[method-assign]
    embedder._infer = counting  # type: ignore[method-assign]
    inv_id = create_and_launch(services, stack.tenant_name, QUESTION, "agentic",
                               launch=lambda i: inline.run(services, i, deliver=False), in_process=in_process)
    with services.session() as session:
        assert repo.get_investigation(session, investigation_id=inv_id).status == "answered"
    # Ahead: nothing written yet. Else the start step, the investigation written and running.
    assert prepared[0] == (0 if in_process else 1, [QUESTION])
    assert embedded.count(QUESTION) == 1


@pytest.mark.parametrize("question", ["", "Which plan includes SCIM provisioning?"])
def test_a_refused_request_embeds_nothing_ahead(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                question: str) -> None:
    """An empty question (ValidationFailed naming it) or an unknown tenant (NotFound): refused before any
    embedding starts."""
    from cli.commands import create_and_launch
    from investigation.errors import NotFound, ValidationFailed

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    services = Services(stack.settings, one_process=True)
    embedder = services.embedder
    assert isinstance(embedder, MiniLMEmbedder)
    prepared: list[list[str]] = []
    embedder.prepare = lambda texts: prepared.append(list(texts))  # type: ignore[method-assign]
    launched: list[str] = []
    with pytest.raises(ValidationFailed if not question else NotFound) as raised:
        create_and_launch(
            services,
            stack.tenant_name if not question else "no-such-tenant",
            question,
            "agentic",
            launch=launched.append,
            in_process=True,
        )
    if isinstance(raised.value, ValidationFailed):
        assert raised.value.field == "question"
    assert prepared == [] and launched == []


def test_query_vectors_go_through_redis_only_between_processes(tmp_path: Path, redis_url: str,
                                                              redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    shared, alone = stack.services, Services(stack.settings, one_process=True)
    assert isinstance(shared.embedder, MiniLMEmbedder) and isinstance(alone.embedder, MiniLMEmbedder)
    assert isinstance(shared.embedder._shared, RedisVectors) and alone.embedder._shared is None
    vectors = f"{redis_prefix}:vec"

    inline.run(alone, _submit(stack, alone), deliver=False)
    assert list(alone.redis.scan_iter(match=f"{vectors}:*")) == []
    inline.run(shared, _submit(stack, shared), deliver=False)  # what a Celery pool process does
    assert list(shared.redis.scan_iter(match=f"{vectors}:*"))  # the redis_prefix fixture deletes them


def test_an_embedder_that_cannot_be_built_leaves_preparing_to_the_search(tmp_path: Path) -> None:
    from config.settings import Settings
    from investigation.errors import PermanentError

    services = Services(Settings(home=tmp_path / "home"), one_process=True)
    attempts: list[int] = []

    def broken(self: Services) -> None:
        attempts.append(1)
        raise PermanentError("embedding model file not found")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Services, "embedder", property(broken))
        services.prepare_queries(["Which plan includes SCIM provisioning?"])  # does not raise
    assert attempts == [1]
