"""The offline heuristic reasoner: routing, planning, grading, sufficiency, selection and synthesis rules.

Pure (numpy only, no framework or SDK); it sits behind `investigation.ports.Reasoner` like the Claude one.
"""
