"""The loop core, pure: state, ports, policy, loop, fusion, citations, errors, prompts, guards, text. No I/O."""

from investigation import compiled as _compiled

__path__ = _compiled.extend(__name__, __path__)  # compiled modules first when built (investigation/compiled.py)
