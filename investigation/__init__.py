"""The loop core, pure: state, ports, policy, loop, fusion, citations, errors, prompts, guards, text. No I/O."""
