"""Which build of the heuristics a process runs, from its settings: the entry point says it here before it
imports them (the decision is taken at the first import of a compiled module; `investigation.compiled`)."""

from __future__ import annotations

from config.settings import Settings
from investigation import compiled


def choose_heuristics_build(settings: Settings) -> None:
    """The compiled build when `settings.engines.compiled` allows it and a build of these sources is there,
    else the Python source (`SLEUTH_COMPILED=false`)."""
    compiled.use(settings.engines.compiled)
