"""`Vocabulary`: a passage's (or several passages') vocabulary as `heuristic.focus` caches it, with the
answers to `_near` it has given.

Its own module because it subclasses `frozenset`: `heuristic.focus` and the other heuristic modules are
compiled with mypyc when the build is there (`investigation/compiled.py`), which compiles no class that
inherits from a built-in type; this one stays an ordinary Python class either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self


class Vocabulary(frozenset[str]):
    """A cached vocabulary (`heuristic.focus._vocabulary`) that also remembers its answers to `focus._near`:
    every check of a hop asks the same question's words of the same evidence, and the answers go when the
    vocabulary does. `by_initial` (built on the first `_near` that has to search) holds its alphabetic words
    by first letter: the only ones `_near_in` can match, so a search reads one letter's words, not all of
    them. The vocabulary of several passages is the union of theirs (`parts`): `_near` asks each passage's
    own, whose answers outlive one question's evidence list (the same passages come back for other questions).
    `words` are its words as written, without the joined word pairs ("andold" for "and old"): a misspelling
    is of a word, never of two ("Android" is not "and old")."""

    __slots__ = ("_by_initial", "near", "parts", "words")
    near: dict[str, bool]
    _by_initial: dict[str, list[str]] | None
    parts: tuple[Vocabulary, ...]
    words: frozenset[str]

    def __new__(cls, items: Iterable[str], parts: tuple[Vocabulary, ...] = (),
                words: Iterable[str] | None = None) -> Self:
        self = super().__new__(cls, items)
        self.near = {}
        self._by_initial = None
        self.parts = parts
        if words is not None:
            self.words = frozenset(words)
        else:
            self.words = frozenset().union(*(p.words for p in parts)) if parts else frozenset(self)
        return self

    def by_initial(self, initial: str) -> list[str]:
        if self._by_initial is None:
            index: dict[str, list[str]] = {}
            for other in self.words:  # iteration order kept within a letter (only a yes/no is asked of them)
                if other.isalpha():
                    index.setdefault(other[0], []).append(other)
            self._by_initial = index
        return self._by_initial.get(initial, [])
