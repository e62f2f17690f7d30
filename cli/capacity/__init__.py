"""`sleuth capacity`: a capacity model measured on this machine (`stack` starts the probed processes,
`measure` takes the snapshots, `saturate` drives Redis and PostgreSQL, `model` does the arithmetic)."""
