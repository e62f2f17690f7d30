"""`sleuth bench --profile FILE`: a cProfile of the run, the retrieval threads of the inline executor
included.

cProfile sees only the thread it was enabled in. The inline executor runs a hop's retrievals on a thread
pool, so the profiled pool here enables one profiler in each of its threads and the saved file merges
them with the main thread's: `python -m pstats FILE` (or snakeviz) shows every step. How to read it:
docs/performance.md.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

from investigation import memo

P = ParamSpec("P")
T = TypeVar("T")


class ProfiledPool(ThreadPoolExecutor):
    """A thread pool whose threads each run under their own profiler (collected in `profiles`)."""

    def __init__(self, max_workers: int) -> None:
        super().__init__(max_workers=max_workers)
        self.profiles: list[cProfile.Profile] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def _profile(self) -> cProfile.Profile:
        profile = getattr(self._local, "profile", None)
        if profile is None:
            profile = cProfile.Profile()
            self._local.profile = profile
            with self._lock:
                self.profiles.append(profile)
        return profile

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        def profiled() -> T:
            profile = self._profile()
            profile.enable()
            try:
                return fn(*args, **kwargs)
            finally:
                profile.disable()

        return super().submit(profiled)


@contextmanager
def profiling(path: Path | None, *, top: int = 25, threads: int = 4) -> Iterator[ThreadPoolExecutor]:
    """The retrieval pool of an inline bench run, shared by its investigations. With a path, the block
    (main thread + the pool's threads) is profiled into `path`, and the top entries by cumulative time
    and the text caches' hit rates are printed."""
    if path is None:
        with ThreadPoolExecutor(max_workers=threads) as plain:
            yield plain
        return
    pool = ProfiledPool(max_workers=threads)
    main = cProfile.Profile()
    main.enable()
    try:
        yield pool
    finally:
        main.disable()
        pool.shutdown(wait=True)
        stats = pstats.Stats(main)
        for profile in pool.profiles:
            stats.add(profile)
        path.parent.mkdir(parents=True, exist_ok=True)
        stats.dump_stats(str(path))
        print(summary(stats, top=top))
        print(f"profile written to {path} (python -m pstats {path}; docs/performance.md)")


def summary(stats: pstats.Stats, *, top: int) -> str:
    """The `top` functions by cumulative time, then each text cache's hits, misses and size."""
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]  # pstats.Stats.stream: missing from typeshed
    stats.sort_stats("cumulative").print_stats(top)
    lines = [out.getvalue().rstrip(), "text caches (hits / misses / entries):"]
    for name, (hits, misses, size) in sorted(memo.stats().items()):
        lines.append(f"  {name}: {hits} / {misses} / {size}")
    return "\n".join(lines)

