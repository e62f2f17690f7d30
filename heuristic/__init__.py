"""The offline heuristic reasoner: routing, planning, grading, sufficiency, selection and synthesis rules.

Pure (numpy only, no framework or SDK); it sits behind `investigation.ports.Reasoner` like the Claude one.
"""

from investigation import compiled as _compiled

# the compiled modules in place of their source when the build is in use (investigation/compiled.py)
_compiled.install()
