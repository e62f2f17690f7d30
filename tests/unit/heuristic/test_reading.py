"""A passage read ahead (`heuristic/reading.py`): the steps then find its readings done, and no answer
changes."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heuristic.planner import plan_question
from heuristic.reading import read_passage
from heuristic.reasoner import HeuristicReasoner
from investigation import memo
from investigation.ports import ReadsAhead
from investigation.state import Passage, Route, RouteDecision

ROOT = Path(__file__).resolve().parents[3]
# What the steps read of a passage alone, and read ahead covers (the rest depends on the question or on the
# evidence as a whole).
PER_PASSAGE = ("investigation.tokens.body_stems", "heuristic.focus.text_vocabulary", "heuristic.prose._units",
               "heuristic.prose._with_context", "investigation.guards.untrusted")


def _vectorise(texts: Sequence[str]) -> np.ndarray:
    """A deterministic stand-in for the embedder: a unit vector seeded by each text's CRC."""
    out = np.empty((len(texts), 384), dtype=np.float32)
    for i, text in enumerate(texts):
        v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384).astype(np.float32)
        out[i] = v / np.linalg.norm(v)
    return out


def _passages() -> list[Passage]:
    lines = (
        (ROOT / "examples" / "bench" / "hotpotqa" / "passages.jsonl").read_text(encoding="utf-8").splitlines()
    )
    docs = [json.loads(line) for line in lines[:12]]
    return [
        Passage(
            chunk_id=d["id"],
            source_id=d["id"],
            title=d["title"],
            text=d["text"],
            score=1.0 / (i + 1),
            engine="bm25",
            rank=i,
        )
        for i, d in enumerate(docs)
    ]


def _investigate(reasoner: HeuristicReasoner, question: str, passages: list[Passage]) -> tuple[Any, ...]:
    route = RouteDecision(route=Route.MULTI_HOP, reason="test")
    plan = plan_question(question, route)
    evidence = reasoner.grade(question, passages, 1, {})
    judgment = reasoner.judge(question, plan, evidence)
    selected = reasoner.select(question, evidence, 5, 800)
    return evidence, judgment, selected, reasoner.synthesize(question, route, selected)


def _misses() -> dict[str, int]:
    return {name: misses for name, (_hits, misses, _size) in memo.stats().items()}


def test_the_steps_find_a_passage_read_ahead_already_read_and_answer_the_same() -> None:
    reasoner = HeuristicReasoner(embedder=None, vectorise=_vectorise)  # type: ignore[arg-type]
    assert isinstance(reasoner, ReadsAhead)
    passages = _passages()
    question = f"Which year was {passages[0].title} founded, and who led {passages[1].title}?"
    memo.clear()
    cold = _investigate(reasoner, question, passages)
    memo.clear()
    for passage in passages:
        reasoner.read_ahead(passage)
    before = _misses()
    assert all(before[name] > 0 for name in PER_PASSAGE)
    for passage in passages:  # found again (a later hop, another question): one look-up each
        reasoner.read_ahead(passage)
    assert _misses() == before and memo.stats()["heuristic.reading._read"][0] == len(passages)
    warm = _investigate(reasoner, question, passages)
    after = _misses()
    assert warm == cold
    assert {name: after[name] - before[name] for name in PER_PASSAGE} == dict.fromkeys(PER_PASSAGE, 0)


def test_nothing_is_read_ahead_while_caching_is_off_and_a_tables_rows_are_left_to_the_steps() -> None:
    passage = _passages()[0]
    with memo.caching(False):
        read_passage(passage)
        assert all(size == 0 for _hits, _misses, size in memo.stats().values())
    memo.clear()
    table = passage.model_copy(
        update={"text": "| Plan | Price |\n|---|---|\n| Team | $10 |\n| Business | $20 |"}
    )
    read_passage(table)
    sizes = {name: size for name, (_hits, _misses, size) in memo.stats().items()}
    assert sizes["heuristic.prose._units"] == 0 and sizes["investigation.tokens.body_stems"] == 1
