"""The loop core, pure: state, ports, policy, loop, fusion, citations, errors, prompts, guards, text. No
I/O."""

from investigation import compiled as _compiled

# the compiled modules in place of their source when the build is in use (investigation/compiled.py)
_compiled.install()
