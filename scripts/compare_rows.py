"""Which questions two sample-bench runs answered differently (the equality of results).

    python3 scripts/compare_rows.py BEFORE.jsonl AFTER.jsonl [LABEL]

Every field of each row (route, retrieved ids, answer, citations, stop reason, hops, recall, ...) is
compared but its timing and the investigation's id. Prints one JSON line: the label (the first file's
name by default), how many rows each run has, and the ids of the rows that differ. Used by
scripts/perf_lockstep.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rows(path: Path) -> dict[str, dict[str, Any]]:
    """The run's rows by question id, each without its timing and investigation id."""
    with path.open() as lines:
        found = [json.loads(line) for line in lines if line.strip()]
    return {
        r["id"]: {k: v for k, v in r.items() if k not in ("latency_ms", "investigation_id")} for r in found
    }


def compared(before: Path, after: Path, label: str | None = None) -> dict[str, Any]:
    a, b = rows(before), rows(after)
    return {"compared": label or before.name, "rows": [len(a), len(b)],
            "differing": [k for k in a if a[k] != b.get(k)]}


if __name__ == "__main__":
    print(
        json.dumps(compared(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None))
    )
