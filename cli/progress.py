"""Progress bars for long CLI steps (ingest, bench): shown on a terminal, silent when piped or in CI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Advance = Callable[[int, int], None]


def shown(console: Console | None) -> bool:
    return console is not None and console.is_terminal and not console.is_dumb_terminal


@contextmanager
def bar(console: Console | None, description: str, total: int | None = None) -> Iterator[Advance]:
    """Yields `update(done, total)`; draws a bar only when `console` is an interactive terminal."""
    if not shown(console):
        yield lambda done, total: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(description, total=total)

        def update(done: int, new_total: int) -> None:
            progress.update(task, completed=done, total=new_total)

        yield update
