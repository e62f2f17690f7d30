"""MiniLMEmbedder: unit vectors, meaningful similarity, cache hits, batch order (runs the real int8 model)."""

from __future__ import annotations

import os
import select
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from adapters.search.embedder import SMALL_BATCH, MiniLMEmbedder
from investigation.errors import PermanentError

TEXTS = [
    "How do I reset my password?",
    "I forgot my password and need a reset link",
    "Invoices can be downloaded as PDF from the billing page.",
    "The 1932 Deep South tornado outbreak killed more than 330 people.",
    "ERR_4021: the IMAP server rejected the connection",
]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    return MiniLMEmbedder(cache_dir=tmp_path_factory.mktemp("cache"))


def test_vectors_are_unit_norm_and_384_dims(embedder: MiniLMEmbedder) -> None:
    vectors = np.array(embedder.embed(TEXTS))
    assert vectors.shape == (len(TEXTS), embedder.dim) == (5, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id and embedder.embed([]) == []


def test_similar_texts_are_closer_than_unrelated_ones(embedder: MiniLMEmbedder) -> None:
    reset, forgot, invoice, tornado, _ = np.array(embedder.embed(TEXTS))
    assert reset @ forgot > 0.6
    assert reset @ forgot > reset @ invoice + 0.3
    assert reset @ forgot > reset @ tornado + 0.3


def test_cache_hit_returns_identical_vectors_without_running_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Ticket {i}: the customer cannot sync mailbox number {i} after the update." for i in range(64)]
    cold_embedder = MiniLMEmbedder(cache_dir=tmp_path)
    cold = cold_embedder.embed_array(texts)

    warm_embedder = MiniLMEmbedder(cache_dir=tmp_path)  # a fresh process would start like this

    def no_inference(_model: object, batch: list[str]) -> list[np.ndarray]:
        raise AssertionError(f"model ran for {len(batch)} cached texts")

    monkeypatch.setattr(warm_embedder, "_infer", no_inference)
    warm = warm_embedder.embed_array(texts)
    assert np.array_equal(cold, warm)
    assert warm_embedder._sessions == {}  # the model was never even loaded
    assert np.array_equal(warm_embedder.embed_array(texts[:3]), cold[:3])  # in-memory LRU path


def test_two_threads_run_the_model_at_once_with_the_vectors_of_one_after_the_other(tmp_path: Path) -> None:
    """A hop's two vector slots embed their queries in parallel (one core each): the lock guards the caches,
    not the model run. Each thread waits inside the model run for the other to arrive: with the run under
    the lock the second could never arrive and the barrier breaks."""
    import threading

    queries = ["Which plan includes SCIM provisioning?", "Who directed the 1958 film Vertigo?"]
    alone = [MiniLMEmbedder(cache_dir=tmp_path / "alone").embed_array([q], persist=False)[0] for q in queries]
    embedder = MiniLMEmbedder(cache_dir=tmp_path / "both")
    real = embedder._infer
    both_inside = threading.Barrier(2, timeout=20)

    def meeting(model: tuple[object, object], batch: list[str]) -> list[np.ndarray]:
        both_inside.wait()
        return real(model, batch)

    embedder._infer = meeting  # type: ignore[method-assign,assignment]
    found: dict[str, np.ndarray] = {}

    def embed(query: str) -> None:
        found[query] = embedder.embed_array([query], persist=False)[0]

    threads = [threading.Thread(target=embed, args=(q,)) for q in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not both_inside.broken
    assert all(np.array_equal(found[q], vec) for q, vec in zip(queries, alone, strict=True))


def test_the_cache_key_includes_max_tokens(tmp_path: Path) -> None:
    long_text = "word " * 300
    short = MiniLMEmbedder(cache_dir=tmp_path, max_tokens=16).embed([long_text])[0]
    full = MiniLMEmbedder(cache_dir=tmp_path, max_tokens=128).embed([long_text])[0]
    assert short != full


def test_batching_preserves_input_order(embedder: MiniLMEmbedder) -> None:
    # Mixed lengths over more than one batch: sorting by length inside must not reorder the output.
    texts = [("support " * (i % 37 + 1)) + f"case {i}" for i in range(70)] + TEXTS
    batched = np.array(MiniLMEmbedder().embed(texts))
    single = MiniLMEmbedder()
    alone = np.array([single.embed([t])[0] for t in texts[::7]])
    # int8 dynamic quantization depends a little on the batch's padding: close, not bit-identical.
    assert np.all(np.sum(batched[::7] * alone, axis=1) > 0.98)
    assert np.array_equal(np.argmax(alone @ batched[::7].T, axis=1), np.arange(len(alone)))


def test_duplicates_in_one_call_are_embedded_once(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["same text", "other text", "same text"])
    assert vectors[0] == vectors[2] != vectors[1]


def test_missing_model_or_tokenizer_is_a_clear_permanent_error(tmp_path: Path) -> None:
    with pytest.raises(PermanentError, match="embedding model file not found"):
        MiniLMEmbedder(model_path=tmp_path / "missing.onnx")
    with pytest.raises(PermanentError, match="tokenizer file not found"):
        MiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json")
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"not a model")
    with pytest.raises(PermanentError, match="cannot load the embedding model"):
        MiniLMEmbedder(model_path=corrupt).embed(["hello"])


def test_unpersisted_vectors_stay_out_of_the_disk_cache(tmp_path: Path) -> None:
    import sqlite3

    embedder = MiniLMEmbedder(cache_dir=tmp_path)
    query = embedder.embed_array(["how do I rotate an API key"], persist=False)
    document = embedder.embed_array(["API keys can be rotated in Settings."])
    assert np.array_equal(embedder.embed_array(["how do I rotate an API key"], persist=False), query)
    embedder.close()
    rows = sqlite3.connect(tmp_path / "embeddings.sqlite").execute("SELECT vec FROM embeddings").fetchall()
    assert len(rows) == 1 and np.array_equal(np.frombuffer(rows[0][0], dtype=np.float32), document[0])


def test_one_thread_and_two_thread_sessions_give_the_same_vectors_bit_for_bit() -> None:
    # The thread setting is a deployment choice: it must never change a vector (nor a ranking).
    texts = [*TEXTS, *(f"Case {i}: SSO login fails with ERR_40{i} after the Okta update." for i in range(20))]
    one, two = MiniLMEmbedder(threads=1), MiniLMEmbedder(threads=2)
    assert one.threads_for(len(texts)) == 1 and two.threads_for(len(texts)) == two._threads
    assert np.array_equal(one.embed_array(texts), two.embed_array(texts))  # 1 thread vs 2, same batches
    # A query runs on the one-thread session whatever the setting, and gets the batch's vector, bit for bit.
    assert two.threads_for(1) == two.threads_for(SMALL_BATCH) == 1
    assert two.threads_for(SMALL_BATCH + 1) == two._threads

    class TwoThreadsAlways(MiniLMEmbedder):  # what a query ran on before it had a session of its own
        def threads_for(self, count: int) -> int:
            return self._threads

    now, before = MiniLMEmbedder(threads=2), TwoThreadsAlways(threads=2)
    assert np.array_equal(np.stack([now.embed_array([q])[0] for q in texts[:6]]),
                          np.stack([before.embed_array([q])[0] for q in texts[:6]]))
    assert set(now._sessions) == {1} and set(before._sessions) == {2}


def test_query_vectors_are_shared_across_processes_through_redis(
    redis_py_url: str, redis_prefix: str
) -> None:
    from adapters.search.embedder import RedisVectors
    from storage.redis_state import client_from_url

    redis_client = client_from_url(redis_py_url)  # bytes, like Services.redis

    query = "Which plan includes SCIM provisioning for EU-1 workspaces?"
    first = MiniLMEmbedder(shared=RedisVectors(redis_client, f"{redis_prefix}:vec"))
    vector = first.embed_array([query], persist=False)
    other = MiniLMEmbedder(shared=RedisVectors(redis_client, f"{redis_prefix}:vec"))  # another pool process

    def no_inference(_model: object, batch: list[str]) -> list[np.ndarray]:
        raise AssertionError(f"model ran for {batch}")

    other._infer = no_inference  # type: ignore[method-assign,assignment]
    assert np.array_equal(other.embed_array([query], persist=False), vector)
    assert redis_client.ttl(f"{redis_prefix}:vec:{first._key(query)}") > 0


def test_an_unreachable_redis_only_means_a_miss() -> None:
    import redis

    from adapters.search.embedder import RedisVectors

    broken = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    embedder = MiniLMEmbedder(shared=RedisVectors(broken, "nowhere"))
    assert embedder.embed_array(["still embedded"], persist=False).shape == (1, embedder.dim)


def test_routing_a_short_question_loads_no_batch_session_and_keeps_the_question_off_disk(
    tmp_path: Path,
) -> None:
    from adapters.llm.heuristic import heuristic_reasoner
    from heuristic.router import _CHITCHAT_PROTOTYPES, chitchat_prototypes

    embedder = MiniLMEmbedder(cache_dir=tmp_path)
    reasoner = heuristic_reasoner(embedder)
    question = "Do you have a student discount?"  # 6 words, no names: compared with the 13 prototypes
    batch = MiniLMEmbedder(cache_dir=None).embed_array([question, *_CHITCHAT_PROTOTYPES], persist=False)
    reasoner.route(question)
    assert set(embedder._sessions) == {1}  # the query session only, although 14 texts were compared
    db = embedder._connection()
    assert db is not None
    stored = {key for (key,) in db.execute("SELECT key FROM embeddings")}
    assert embedder._key(question) not in stored  # a question never grows the on-disk cache
    assert {embedder._key(text) for text in _CHITCHAT_PROTOTYPES} <= stored  # the fixed prototypes do
    # One text at a time gives the vectors one padded batch of all 14 gave (two-thread session), bit for bit.
    assert np.array_equal(chitchat_prototypes(embedder), batch[1:])


def test_one_process_shares_the_model_and_a_forked_child_loads_its_own(tmp_path: Path) -> None:
    first, second = MiniLMEmbedder(cache_dir=tmp_path / "a"), MiniLMEmbedder(cache_dir=tmp_path / "b")
    first.embed(["How do I reset my password?"])
    second.embed(["Where are my invoices?"])
    assert second._sessions[1] is first._sessions[1] and second._tokenizer is first._tokenizer
    # A batch runs on the two-thread session, whose pool threads the child will not have.
    first.embed([f"Case {i}: the export stopped at row {i}" for i in range(SMALL_BATCH + 4)])
    assert first._sessions[2] is not None
    parent_session = first._sessions[1]
    time.sleep(0.5)  # the pool threads go from spinning to waiting on their condition, as an idle parent's do
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's session is not used (its thread pool stayed in the parent)
        message = b"?"
        try:
            vector = second.embed_array(["A text the parent never embedded"], persist=False)[0]
            fresh = second._sessions[1] is not parent_session
            message = b"1" if fresh and abs(float(vector @ vector) - 1) < 1e-4 else b"0"
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            message = repr(exc).encode()
        finally:
            os.write(write, message)
            os._exit(0)
    os.close(write)
    readable, _, _ = select.select([read], [], [], 120)  # a child stuck on its parent's models never answers
    answer = os.read(read, 4096) if readable else b"no answer: the child hangs"
    if not readable:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert answer == b"1"
