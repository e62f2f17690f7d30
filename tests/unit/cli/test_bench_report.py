"""`sleuth bench` figures and report, from hand-made rows and traces (no services)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cli.bench import load_set
from cli.bench_metrics import (
    answer_body,
    answer_scores,
    decision_of,
    expected_route,
    hop_stats,
    normalise_answer,
    summarise,
    token_f1,
)
from cli.bench_report import svg_confusion, write_report


def row(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "q",
        "question": "q?",
        "status": "answered",
        "route": "lookup",
        "expected_route": "lookup",
        "decision": "lookup",
        "in_corpus": True,
        "gold": ["a"],
        "retrieved": ["a"],
        "recall": 1.0,
        "recall@5": 1.0,
        "recall_by_hop": [1.0],
        "hops": 1,
        "retrieval_calls": 2,
        "charged_calls": 2,
        "evidence_tokens": 100,
        "latency_ms": 5.0,
        "stop_reason": "sufficient",
        "loop": [],
        "answer_scores": None,
    }
    base.update(fields)
    return base


def test_squad_normalisation_and_token_f1() -> None:
    assert normalise_answer("The  Eiffel Tower!") == "eiffel tower"
    assert token_f1("the Eiffel Tower in Paris", "Eiffel Tower") == pytest.approx(
        2 * (2 / 4) * 1 / (2 / 4 + 1)
    )
    assert token_f1("", "x") == 0.0 and token_f1("Paris", "London") == 0.0


def test_answer_scores_use_the_best_alias_and_ignore_citations() -> None:
    answer = "From the knowledge base:\n- G. Stanley Hall was its first president [1]."
    assert answer_body(answer) == "G. Stanley Hall was its first president ."
    scores = answer_scores(answer, ["Granville Stanley Hall", "Stanley Hall"])
    assert scores is not None
    assert scores["contains"] == 1.0 and scores["em"] == 0.0 and scores["token_recall"] == 1.0
    cited = answer_scores("Stanley Hall [2]", ["stanley hall"])
    assert cited is not None and cited["em"] == 1.0
    assert answer_scores("anything", []) is None


@pytest.mark.parametrize(
    ("labelled", "route"),
    [
        ({"type": "comparison"}, "multi_part"),
        ({"type": "bridge"}, "multi_hop"),
        ({"type": "3hop1"}, "multi_hop"),
        ({"type": "2hop"}, "multi_hop"),
        ({"route": "direct", "type": "bridge"}, "direct"),
        ({"type": "other"}, None),
    ],
)
def test_benchmark_types_map_to_routes(labelled: dict[str, str], route: str | None) -> None:
    assert expected_route(labelled) == route


def test_a_refusal_is_an_out_of_corpus_decision() -> None:
    assert decision_of("multi_hop", "refused") == "out_of_corpus"
    assert decision_of("lookup", "answered") == "lookup"


def _trace() -> list[dict[str, Any]]:
    return [
        {"kind": "hop", "hop": 1, "data": {"queries": ["q"]}},
        {"kind": "retrieval", "hop": 1, "data": {"error": None}},
        {"kind": "retrieval", "hop": 1, "data": {"error": None}},
        {"kind": "fusion", "hop": 1, "data": {"fused": list("abcde"), "dedup_hits": []}},
        {"kind": "grades", "hop": 1, "data": {"grades": [{"grade": "correct"}, {"grade": "incorrect"}]}},
        {"kind": "decision", "hop": 1, "data": {"action": "continue", "reason": "insufficient"}},
        {"kind": "hop", "hop": 2, "data": {"queries": ["bridge"]}},
        {"kind": "retrieval", "hop": 2, "data": {"error": None}},
        {"kind": "retrieval", "hop": 2, "data": {"error": "retrieval_budget"}},
        {"kind": "fusion", "hop": 2, "data": {"fused": list("abcdf"), "dedup_hits": list("abcd")}},
        {"kind": "decision", "hop": 2, "data": {"action": "stop", "reason": "no_new_evidence"}},
    ]


def test_hop_stats_count_calls_seen_evidence_and_thrash() -> None:
    hops = hop_stats(_trace())
    assert [h["retrievals"] for h in hops] == [2, 1]  # a call refused by the budget is not a call
    assert (hops[0]["fused"], hops[0]["already_seen"], hops[0]["new_relevant"]) == (5, 0, 1)
    assert not hops[0]["thrash"] and hops[1]["thrash"]  # 4 of 5 already seen = 80 %
    assert hops[1]["reason"] == "no_new_evidence"


def test_summary_reports_decisions_refusals_and_loop_health() -> None:
    loop = hop_stats(_trace())
    rows = [
        row(hops=2, retrieval_calls=3, loop=loop, recall_by_hop=[0.5, 1.0], stop_reason="no_new_evidence"),
        row(recall=0.5, **{"recall@5": 0.0}, recall_by_hop=[0.5]),
        row(
            expected_route="multi_hop",
            decision="out_of_corpus",
            status="refused",
            route="multi_hop",
            recall=0.0,
            **{"recall@5": 0.0},
            recall_by_hop=[0.0],
            stop_reason="unanswerable",
        ),
        row(
            expected_route="direct",
            route="direct",
            decision="direct",
            gold=[],
            hops=0,
            retrieval_calls=0,
            recall_by_hop=[],
            stop_reason="direct",
        ),
        row(
            expected_route="out_of_corpus",
            decision="out_of_corpus",
            status="refused",
            in_corpus=False,
            stop_reason="unanswerable",
        ),
        row(
            expected_route="out_of_corpus", decision="lookup", in_corpus=False, stop_reason="hop_cap", hops=3
        ),
    ]
    s = summarise(rows, k=10)
    assert s["recall@10"] == pytest.approx(0.5, abs=1e-3) and s["all_gold@10"] == pytest.approx(
        1 / 3, abs=1e-3
    )
    # a question that stopped after hop 1 keeps its hop-1 figure in the hop-2 average
    assert s["recall@10_by_hop"] == [pytest.approx(1 / 3, abs=1e-3), pytest.approx(0.5, abs=1e-3)]
    assert s["decisions"]["confusion"]["out_of_corpus"] == {"out_of_corpus": 1, "lookup": 1}
    assert s["decisions"]["confusion"]["multi_hop"] == {"out_of_corpus": 1}
    assert s["decisions"]["route_accuracy"] == pytest.approx(4 / 4, abs=1e-3)
    assert s["refusal"]["refusal_rate"] == 0.5 and s["refusal"]["false_refusal_rate"] == pytest.approx(
        1 / 3, abs=1e-3
    )
    assert s["refusal"]["direct_retrieval_calls"] == 0
    health = s["loop_health"]
    assert health["thrash_rate"] == 1.0 and health["follow_up_hops"] == 1
    assert health["duplicate_evidence_rate"] == pytest.approx(4 / 10, abs=1e-3)
    assert health["hops_histogram"] == {"0": 1, "1": 3, "2": 1, "3": 1}
    assert s["over_hop_cap"] == 0 and s["max_hops"] == 3


def test_report_is_self_contained_html_with_charts_and_the_confusion_matrix(tmp_path: Path) -> None:
    rows = [
        row(),
        row(expected_route="multi_hop", decision="lookup", recall=0.5, recall_by_hop=[0.5, 0.5], hops=2),
    ]
    summary = {"dataset": "hotpotqa", "mode": "agentic", "executor": "inline", "k": 10, "wall_seconds": 1.0,
               **summarise(rows, k=10)}
    out = tmp_path / "r" / "report.html"
    write_report(out, summary, rows, baseline=[row(recall=0.5, recall_by_hop=[0.5], mode="single-shot")])
    page = out.read_text()
    assert page.count("<svg") >= 3 and "recall@10 of the ranking after each hop" in page
    assert "baseline (single-shot)" in page and "misses target" in page and "meets target" in page
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing fetched from elsewhere
    matrix = svg_confusion(summary["decisions"]["confusion"])
    assert "expected multi_hop, decided lookup: 1" in matrix


def test_decision_sets_and_other_corpora_set_the_expected_outcome(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "plans.md").write_text("# Plans\n\nTeam costs $15 per seat.\n")
    (tmp_path / "decisions.jsonl").write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"question": "hi!", "route": "direct", "gold_source_ids": [], "answer": None},
                {
                    "question": "What does Team cost?",
                    "route": "lookup",
                    "gold_source_ids": ["plans"],
                    "answer": "$15",
                },
            ]
        )
    )
    decisions = load_set(tmp_path, decisions=True, corpus_dir=None, limit=None)
    assert [q["expected_route"] for q in decisions.questions] == ["direct", "lookup"]
    assert decisions.corpus == (kb,) and decisions.questions[1]["answers"] == ["$15"]

    other = tmp_path / "other"
    other.mkdir()
    (other / "passages.jsonl").write_text(json.dumps({"id": "x", "title": "X", "text": "Unrelated."}) + "\n")
    moved = load_set(tmp_path, decisions=True, corpus_dir=other, limit=None)
    assert [q["expected_route"] for q in moved.questions] == ["direct", "out_of_corpus"]
    assert not moved.questions[1]["in_corpus"] and "vs corpus other" in moved.name


def test_currency_signs_are_punctuation_like_the_dollar() -> None:
    assert normalise_answer("EUR €1.90 or £1.60") == normalise_answer("EUR 1.90 or 1.60")
    scores = answer_scores("Team: EUR €1.90 per 1,000 runs [1].", ["1.90"])
    assert scores is not None and scores["contains"] == 1.0
