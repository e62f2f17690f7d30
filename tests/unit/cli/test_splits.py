"""The frozen dev/test split: a question's half depends on its id alone, and the halves are pinned."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cli.bench import load_set
from cli.splits import select, split_of, stable_id
from investigation.errors import ValidationFailed

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_a_half_is_sha256_of_the_id_first_byte_parity() -> None:
    for qid in ("acme-001", "parcelo-042", "5a77ec115542992a6e59dff7", "x"):
        expected = "dev" if hashlib.sha256(qid.encode()).digest()[0] % 2 == 0 else "test"
        assert split_of(qid) == expected


def test_rows_without_an_id_get_one_from_question_and_context() -> None:
    a = {"question": "Why is my workspace read-only?", "context": {"account_id": "acct-42"}}
    b = {"question": "Why is my workspace read-only?", "context": {"account_id": "acct-13"}}
    assert stable_id(a) == stable_id(dict(reversed(list(a.items()))))  # key order does not matter
    assert stable_id(a) != stable_id(b) and stable_id(a).startswith("q-")
    assert stable_id({"id": "given", "question": "q"}) == "given"


def test_select_keeps_order_partitions_and_ignores_the_neighbours() -> None:
    rows = [{"id": f"made-up-{n:03d}", "question": f"q{n}"} for n in range(60)]
    dev, test = select(rows, "dev"), select(rows, "test")
    assert sorted(r["id"] for r in dev + test) == [r["id"] for r in rows]
    assert not {r["id"] for r in dev} & {r["id"] for r in test}
    assert dev == [r for r in rows if r in dev]  # original order
    assert select(rows, None) == rows
    # Removing or reordering other questions never moves a question between halves.
    assert select(list(reversed(rows[::3])), "dev") == list(reversed([r for r in dev if r in rows[::3]]))


def test_an_unknown_split_names_the_option() -> None:
    with pytest.raises(ValidationFailed) as err:
        select([], "train")
    assert "split" in str(err.value)


def test_bench_sets_load_one_half_before_the_limit(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "plans.md").write_text("# Plans\n\nTeam costs $15 per seat.\n")
    rows = [{"id": f"made-up-{n:03d}", "question": f"What does plan {n} cost?", "route": "lookup",
             "gold_source_ids": ["plans"], "answer": "$15"} for n in range(20)]
    (tmp_path / "decisions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    dev = load_set(tmp_path, decisions=True, corpus_dir=None, limit=None, split="dev")
    test = load_set(tmp_path, decisions=True, corpus_dir=None, limit=None, split="test")
    assert len(dev.questions) + len(test.questions) == 20 and "[dev]" in dev.name
    assert all(split_of(q["id"]) == "dev" for q in dev.questions)
    first = load_set(tmp_path, decisions=True, corpus_dir=None, limit=2, split="test")
    assert [q["id"] for q in first.questions] == [q["id"] for q in test.questions[:2]]


# The committed halves: a change to the hash or to the ids would silently re-draw them.
PINNED = {
    "decisions.jsonl": (41, 48),
    "parcelo/decisions.jsonl": (36, 42),
    "bench/hotpotqa/questions.jsonl": (39, 61),
    "bench/musique/questions.jsonl": (52, 48),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_committed_sets_keep_their_halves(name: str) -> None:
    rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines() if line.strip()]
    assert (len(select(rows, "dev")), len(select(rows, "test"))) == PINNED[name]
