"""Pure domain of an investigation: state, router, planner, grader, policy, citations. No I/O."""
