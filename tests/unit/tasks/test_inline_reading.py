"""The inline executor's reading ahead (`tasks/inline.py::_ReadingAhead`): passages found by a hop's first
searches are read while another still searches and the hop still waits for its embedding, each once, and
never once every search is back or the embedding is done."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import pytest

from investigation.state import Passage
from tasks.inline import _ReadingAhead

LONG = 30.0  # a search waiting longer than this has been left waiting: the test fails, it does not hang


def _passage(chunk_id: str) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id, title=chunk_id, text=f"{chunk_id} text", score=1.0,
                   engine="bm25", rank=0)


class _RunsAtOnce(Executor):
    """An executor whose work is done when `submit` returns: every search is back before anything is read."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(fn(*args, **kwargs))
        return done


def test_what_the_first_searches_found_is_read_while_another_still_searches_each_passage_once() -> None:
    read: list[str] = []
    two_read = threading.Event()

    def reading(passage: Passage) -> None:
        read.append(passage.chunk_id)
        if len(read) == 2:
            two_read.set()

    with ThreadPoolExecutor(2) as pool:
        ahead = _ReadingAhead(pool, reading, lambda: True)

        def search(name: str) -> str:
            if name == "lexical":
                ahead.found([_passage("a"), _passage("b"), _passage("a")])
                return "lexical hits"
            return "vector hits" if two_read.wait(LONG) else "left waiting"  # back once both were read

        assert ahead.map(search, ["lexical", "vector"]) == ["lexical hits", "vector hits"]
    assert read == ["a", "b"] and ahead.reads == 2


def test_nothing_is_read_once_every_search_is_back() -> None:
    read: list[str] = []
    ahead = _ReadingAhead(_RunsAtOnce(), lambda passage: read.append(passage.chunk_id), lambda: True)

    def search(name: str) -> str:
        ahead.found([_passage(f"{name}-1"), _passage(f"{name}-2")])
        return name

    assert ahead.map(search, ["lexical", "vector"]) == ["lexical", "vector"]
    assert read == [] and ahead.reads == 0


def test_a_reading_that_fails_ends_the_reading_ahead_not_the_hop(caplog: pytest.LogCaptureFixture) -> None:
    tried: list[str] = []
    failed = threading.Event()

    def reading(passage: Passage) -> None:
        tried.append(passage.chunk_id)
        failed.set()
        raise RuntimeError("a heuristic bug")

    with ThreadPoolExecutor(2) as pool:
        ahead = _ReadingAhead(pool, reading, lambda: True)

        def search(name: str) -> str:
            if name == "lexical":
                ahead.found([_passage("a"), _passage("b")])
                return "lexical hits"
            return "vector hits" if failed.wait(LONG) else "left waiting"

        with caplog.at_level(logging.WARNING, logger="tasks.inline"):
            assert ahead.map(search, ["lexical", "vector"]) == ["lexical hits", "vector hits"]
    assert tried == ["a"] and ahead.reads == 0
    assert "reading ahead stopped at a" in caplog.text


def test_reading_stops_once_the_hop_no_longer_waits_for_its_embedding() -> None:
    read: list[str] = []
    embedded = threading.Event()  # the query's vector is ready from the first passage read on

    def reading(passage: Passage) -> None:
        read.append(passage.chunk_id)
        embedded.set()

    with ThreadPoolExecutor(2) as pool:
        ahead = _ReadingAhead(pool, reading, lambda: not embedded.is_set())

        def search(name: str) -> str:
            if name == "lexical":
                ahead.found([_passage("a"), _passage("b"), _passage("c")])
                return "lexical hits"
            return "vector hits" if embedded.wait(LONG) else "left waiting"

        assert ahead.map(search, ["lexical", "vector"]) == ["lexical hits", "vector hits"]
    assert read == ["a"]
