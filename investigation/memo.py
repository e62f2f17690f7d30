"""Bounded memoisation of pure text functions, with one switch to turn every such cache off.

The heuristic reasoner reads the same passages again in routing, grading, selection, focus and synthesis,
in every hop and for every question. Functions of a text alone (fold, words, stems, names, a passage's
vocabulary) are memoised here, keyed by the text. That is safe because they are pure, their cached
results are immutable (tuples, frozensets, strings; public wrappers hand out fresh lists and sets), and
each cache is an LRU of fixed size. `caching(False)` (or `SLEUTH_TEXT_CACHE=false`) runs the same code
with every cache bypassed: the equality test and `sleuth bench` compare the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import _lru_cache_wrapper, lru_cache, wraps
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_enabled = True
_caches: list[_lru_cache_wrapper[Any]] = []


def memoised(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """An LRU cache of `maxsize` entries for a pure function of strings, called with positional arguments
    only, bypassed while caching is off. Its results must be immutable: callers share them."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        wrapper = lru_cache(maxsize=maxsize)(fn)
        _caches.append(wrapper)
        cached: Callable[..., R] = wrapper  # the same signature as `fn` at run time
        direct: Callable[..., R] = fn

        # Positional arguments only (every caller passes them so): a `**kwargs` wrapper cost an empty dict per
        # call, and these run half a million times in a hundred investigations.
        @wraps(fn)
        def call(*args: Any) -> R:
            return cached(*args) if _enabled else direct(*args)

        return call  # type: ignore[return-value]  # the same signature as `fn`, positional

    return decorate


def enabled() -> bool:
    """Whether the text caches are in use in this process."""
    return _enabled


def set_enabled(on: bool) -> None:
    """Turn every text cache on or off for this process (off also empties them)."""
    global _enabled
    _enabled = on
    if not on:
        clear()


@contextmanager
def caching(on: bool) -> Iterator[None]:
    """Run a block with the text caches on or off, restoring the previous state afterwards."""
    before = _enabled
    set_enabled(on)
    try:
        yield
    finally:
        set_enabled(before)


def clear() -> None:
    """Empty every text cache (e.g. between two measured runs)."""
    for cache in _caches:
        cache.cache_clear()


def stats() -> dict[str, tuple[int, int, int]]:
    """name → (hits, misses, current size) of each cache: what `sleuth bench --profile` reports."""
    out: dict[str, tuple[int, int, int]] = {}
    for cache in _caches:
        info = cache.cache_info()
        name = f"{cache.__wrapped__.__module__}.{cache.__wrapped__.__qualname__}"
        out[name] = (info.hits, info.misses, info.currsize)
    return out
