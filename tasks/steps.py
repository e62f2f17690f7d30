"""The steps of an investigation as plain functions: load by id → call the domain → persist → return what
runs next (`Next`). One module per step:

- `tasks.start_step.start`: route and plan; answer greetings at once; plan hop 1;
- `tasks.retrieve_step.retrieve`: one sub-query on one engine (`retrieve_many`: several of a hop);
- `tasks.reduce_step.reduce`: fuse, grade, judge, decide; plan the next hop or stop;
- `tasks.synthesize_step.synthesize`: the cited answer, the terminal status;
- `tasks.fail_step.fail`: a terminal `failed`; `overdue`: the watchdog's look-up.

Celery tasks (`tasks.celery_tasks`) and the in-process executor (`tasks.inline`) call exactly these, so
both executors run the same code path; the in-process one also hands each step what the step before
holds (`tasks.relay.Relay`). Every step is idempotent on (investigation, hop, step): a redelivered task
finds its own earlier writes and returns the same `Next`.
"""

from __future__ import annotations

from tasks.fail_step import fail, overdue
from tasks.next import Next, NextKind, hop_marker, hop_slots
from tasks.reduce_step import reduce
from tasks.retrieve_step import retrieve, retrieve_many
from tasks.start_step import start
from tasks.synthesize_step import synthesize
from tasks.trace import write_events

__all__ = ["Next", "NextKind", "fail", "hop_marker", "hop_slots", "overdue", "reduce", "retrieve",
           "retrieve_many", "start", "synthesize", "write_events"]
