"""The paraphrase probe (examples/paraphrase/): dev-half questions only, reworded, labels kept (the support
sets' decisions and the multi-hop sets' questions), and a bench option that runs a decision set against
another folder's kb/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.search.ingest import load_documents
from cli.bench import load_set
from cli.splits import select
from investigation.errors import ValidationFailed

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SOURCES = {"acme": EXAMPLES / "decisions.jsonl", "parcelo": EXAMPLES / "parcelo" / "decisions.jsonl",
           "wagely": EXAMPLES / "wagely" / "decisions.jsonl"}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# Each probe file and the labelled set whose dev half it rewords.
PARAPHRASES = EXAMPLES / "paraphrase"
PROBES = [*((PARAPHRASES / name / "decisions.jsonl", source) for name, source in SOURCES.items()),
          *((PARAPHRASES / name / "questions.jsonl", EXAMPLES / "bench" / name / "questions.jsonl")
            for name in ("hotpotqa", "musique"))]


@pytest.mark.parametrize(("probe_file", "source"), PROBES, ids=lambda p: p.parent.name)
def test_every_paraphrase_rewords_one_dev_question_and_keeps_its_labels(probe_file: Path,
                                                                        source: Path) -> None:
    dev = {r["id"]: r for r in select(_rows(source), "dev")}
    probe = _rows(probe_file)
    assert sorted(r["id"] for r in probe) == sorted(f"{i}-p" for i in dev)
    for row in probe:
        original = dev[row["id"].removesuffix("-p")]
        assert row["question"] != original["question"]
        assert {k: v for k, v in row.items() if k not in ("id", "question")} == {
            k: v for k, v in original.items() if k not in ("id", "question")}


def test_kb_dir_asks_another_folders_kb_with_the_labels_as_written(tmp_path: Path) -> None:
    kb = tmp_path / "plans" / "kb"
    kb.mkdir(parents=True)
    (kb / "plans.md").write_text("# Plans\n\nTeam costs $15 per seat.\n")
    probe = tmp_path / "probe"
    probe.mkdir()
    rows = [{"id": "a-p", "question": "Team price per seat?", "route": "lookup", "gold_source_ids": ["plans"],
             "answer": "$15"},
            {"id": "b-p", "question": "Got a fax number?", "route": "out_of_corpus", "gold_source_ids": []}]
    (probe / "decisions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    bench = load_set(probe, decisions=True, corpus_dir=None, limit=None, kb_dir=tmp_path / "plans")
    assert bench.corpus == (kb,) and bench.corpus_name == "plans"
    assert [(q["in_corpus"], q["expected_route"]) for q in bench.questions] == [
        (True, "lookup"), (True, "out_of_corpus")]


def test_a_bad_kb_dir_is_refused_naming_the_option(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "decisions.jsonl").write_text(json.dumps({"id": "a", "question": "Price?", "route": "lookup"}))
    with pytest.raises(ValidationFailed) as missing:
        load_set(probe, decisions=True, corpus_dir=None, limit=None, kb_dir=tmp_path / "nowhere")
    assert missing.value.field == "kb_dir" and "nowhere" in str(missing.value)
    with pytest.raises(ValidationFailed) as alone:
        load_set(probe, decisions=False, corpus_dir=None, limit=None, kb_dir=probe)
    assert alone.value.field == "kb_dir" and "--decisions" in str(alone.value)


@pytest.mark.parametrize("name", ["acme", "parcelo", "wagely"])
def test_the_out_of_corpus_probe_is_new_questions_each_labelled_out_of_corpus(name: str) -> None:
    probe = EXAMPLES / "probe_ooc" / name
    rows = _rows(probe / "decisions.jsonl")
    asked = {r["question"] for r in _rows(SOURCES[name])}
    assert len({r["id"] for r in rows}) == len(rows) >= 10
    assert all(r["route"] == "out_of_corpus" and r["gold_source_ids"] == [] for r in rows)
    assert not asked & {r["question"] for r in rows}  # none copied from the labelled set
    kb_dir = EXAMPLES if name == "acme" else EXAMPLES / name  # the demo KB is examples/kb/
    bench = load_set(probe, decisions=True, corpus_dir=None, limit=None, kb_dir=kb_dir)
    assert len(bench.questions) == len(rows)


def _kb_texts(kb: Path) -> dict[str, str]:
    """A knowledge base's documents by id as `sleuth ingest` loads them, title and text lower-cased with their
    whitespace collapsed."""
    return {doc.id: " ".join(f"{doc.title} {doc.text}".lower().split()) for doc in load_documents([kb])}


@pytest.mark.parametrize("name", ["acme", "wagely", "parcelo"])
def test_the_in_corpus_probe_is_new_answerable_questions_with_their_answers(name: str) -> None:
    probe = EXAMPLES / "probe_incorpus" / name
    rows = _rows(probe / "decisions.jsonl")
    kb_dir = EXAMPLES if name == "acme" else EXAMPLES / name  # the demo KB is examples/kb/
    docs = _kb_texts(kb_dir / "kb")
    asked = {r["question"] for r in _rows(SOURCES[name])}
    assert len({r["id"] for r in rows}) == len(rows) >= 10
    for row in rows:  # every gold source is a document of the KB, and the answer is one's own words
        assert row["gold_source_ids"] and set(row["gold_source_ids"]) <= set(docs), row["id"]
        answer = " ".join(row["answer"].lower().split())
        assert any(answer in docs[doc_id] for doc_id in row["gold_source_ids"]), row["id"]
    assert not asked & {r["question"] for r in rows}
    assert len(load_set(probe, decisions=True, corpus_dir=None, limit=None,
                        kb_dir=kb_dir).questions) == len(rows)
