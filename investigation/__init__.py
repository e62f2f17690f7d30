"""The loop core, pure: state, ports, policy, loop, fusion, citations, errors, prompts, guards, text. No
I/O."""

from investigation import compiled as _compiled

# compiled modules first when built (investigation/compiled.py)
__path__ = _compiled.extend(__name__, __path__)
