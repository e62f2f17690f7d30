"""The offline heuristic reasoner: routing, planning, grading, sufficiency, selection and synthesis rules.

Pure (numpy only, no framework or SDK); it sits behind `investigation.ports.Reasoner` like the Claude one.
"""

from investigation import compiled as _compiled

# compiled modules first when built (investigation/compiled.py)
__path__ = _compiled.extend(__name__, __path__)
