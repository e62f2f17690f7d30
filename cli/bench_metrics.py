"""Pure figures of `sleuth bench`: answer scores (SQuAD EM / token F1), the expected route of a benchmark
question, loop health from a trace, and the run summary (recall, cost, decisions, refusals, loop health).

Nothing here does I/O: the bench command turns investigations into rows, these functions turn rows into
figures, and the tests feed them hand-made rows.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

ROUTES = ("direct", "lookup", "multi_part", "multi_hop", "out_of_corpus")
# A follow-up hop "thrashes" when at least this share of what it retrieved was already seen.
THRASH_SHARE = 0.8
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_MARKER = re.compile(r"\[\d{1,3}\]")
_PREFIX = "From the knowledge base:"


# -- answers ----------------------------------------------------------------------------------------


# Currency signs go like "$" (which string.punctuation holds): "€1.90" contains the gold "1.90" as "$70" does
# "70".
_PUNCTUATION = frozenset(string.punctuation) | frozenset("€£¥")


def normalise_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, no punctuation (currency signs included), no articles, single
    spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_body(answer: str | None) -> str:
    """The answer text without citation markers, bullets and the extractive preamble."""
    if not answer:
        return ""
    text = _MARKER.sub("", answer.replace(_PREFIX, " "))
    return " ".join(line.strip().lstrip("-•* ").strip() for line in text.splitlines() if line.strip())


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 between a prediction and one gold answer (both normalised here)."""
    pred, ref = normalise_answer(prediction).split(), normalise_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9$€£])")


def first_sentence(answer: str | None) -> str:
    """The first sentence of an answer (citation markers and preamble removed): what an agent pastes."""
    body = answer_body(answer)
    return _SENTENCE.split(body, maxsplit=1)[0] if body else ""


def answer_scores(answer: str | None, golds: Sequence[str]) -> dict[str, float] | None:
    """EM, token F1, containment (a gold answer appears whole), answer-first (the first sentence contains
    one) and gold-token recall, best over golds.

    None when there is no gold answer (greetings, out-of-corpus questions).
    """
    golds = [g for g in golds if g and normalise_answer(g)]
    if not golds:
        return None
    body = answer_body(answer)
    norm = normalise_answer(body)
    padded = f" {norm} "
    tokens = Counter(norm.split())
    recalls = []
    for gold in golds:
        ref = Counter(normalise_answer(gold).split())
        recalls.append(sum((ref & tokens).values()) / max(1, sum(ref.values())))
    return {
        "em": float(any(norm == normalise_answer(g) for g in golds)),
        "f1": round(max(token_f1(body, g) for g in golds), 4),
        "contains": float(any(f" {normalise_answer(g)} " in padded for g in golds)),
        "first": float(any(f" {normalise_answer(g)} " in f" {normalise_answer(first_sentence(answer))} "
                           for g in golds)),
        "token_recall": round(max(recalls), 4),
    }


# -- decisions --------------------------------------------------------------------------------------


def expected_route(row: dict[str, Any]) -> str | None:
    """The route a labelled question should take: its `route` label, else its benchmark type
    (HotpotQA comparison → multi_part, bridge → multi_hop; MuSiQue's 2hop/3hop…/4hop… → multi_hop)."""
    label = row.get("route") or row.get("expected_route")
    if label in ROUTES:
        return str(label)
    kind = str(row.get("type") or "").lower()
    if kind == "comparison":
        return "multi_part"
    if kind == "bridge" or re.match(r"^\d+hop", kind):
        return "multi_hop"
    return None


def decision_of(route: str | None, status: str) -> str:
    """What the investigation decided in the end: a refusal counts as `out_of_corpus`."""
    if status == "refused":
        return "out_of_corpus"
    return route or "none"


def confusion(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """expected → decided → count, over rows with an expected route."""
    matrix: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.get("expected_route"):
            cell = matrix.setdefault(r["expected_route"], {})
            cell[r["decision"]] = cell.get(r["decision"], 0) + 1
    return matrix


# -- loop health ------------------------------------------------------------------------------------


def hop_stats(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per hop, from the trace: queries, passages retrieved (fused), already seen, new graded evidence
    (and how many agree with the question), thrash flag, and the decision taken after it."""
    hops: dict[int, dict[str, Any]] = {}
    for event in events:
        kind, data, number = event["kind"], event.get("data") or {}, int(event.get("hop") or 0)
        if kind not in ("hop", "retrieval", "fusion", "grades", "decision") or number < 1:
            continue
        hop = hops.setdefault(number, {"hop": number, "queries": [], "retrievals": 0, "fused": 0,
                                       "already_seen": 0, "new": 0, "new_relevant": 0, "thrash": False,
                                       "action": None, "reason": None})
        if kind == "hop":
            hop["queries"] = list(data.get("queries") or [])
        elif kind == "retrieval":
            if data.get("error") not in ("retrieval_budget", "deadline"):
                hop["retrievals"] += 1
        elif kind == "fusion":
            hop["fused"] = len(data.get("fused") or [])
            hop["already_seen"] = len(data.get("dedup_hits") or [])
        elif kind == "grades":
            grades = data.get("grades") or []
            hop["new"] = len(grades)
            hop["new_relevant"] = sum(g.get("grade") != "incorrect" for g in grades)
        elif kind == "decision":
            hop["action"], hop["reason"] = data.get("action"), data.get("reason")
    for hop in hops.values():
        hop["thrash"] = (
            hop["hop"] > 1 and hop["fused"] > 0 and hop["already_seen"] >= THRASH_SHARE * hop["fused"]
        )
    return [hops[n] for n in sorted(hops)]


def recall(retrieved: Sequence[str], gold: Sequence[str]) -> float:
    return sum(g in retrieved for g in gold) / len(gold) if gold else 0.0


# -- summary ----------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarise(rows: Sequence[dict[str, Any]], *, k: int, max_hops: int = 3) -> dict[str, Any]:
    """Every figure of one run. Recall counts only questions whose gold is in the corpus (`in_corpus`);
    refusal counts out-of-corpus questions; false refusals count in-corpus questions that need retrieval."""
    scored = [r for r in rows if r.get("in_corpus") and r.get("gold")]
    retrieving = [r for r in rows if r.get("expected_route") != "direct"]
    out_of_corpus = [r for r in rows if r.get("expected_route") == "out_of_corpus"]
    in_corpus = [
        r for r in rows if r.get("in_corpus") and r.get("expected_route") not in ("direct", "out_of_corpus")
    ]
    direct = [r for r in rows if r.get("expected_route") == "direct"]
    routed = [r for r in rows if r.get("expected_route") in ROUTES[:4]]
    labelled = [r for r in rows if r.get("expected_route")]
    customer = [r for r in rows if r.get("audience") == "customer"]
    all_hops = [h for r in rows for h in r.get("loop", [])]
    follow_ups = [h for h in all_hops if h["hop"] > 1]
    fused = sum(h["fused"] for h in all_hops)
    stops = Counter(str(r.get("stop_reason")) for r in rows)
    hist = Counter(int(r.get("hops") or 0) for r in rows)
    answers = [r["answer_scores"] for r in rows if r.get("answer_scores")]
    by_hop: list[float] = []
    for h in range(1, max(1, max((len(r.get("recall_by_hop") or []) for r in scored), default=1)) + 1):
        values = [(r["recall_by_hop"][min(h, len(r["recall_by_hop"])) - 1] if r.get("recall_by_hop") else 0.0)
                  for r in scored]
        if values:
            by_hop.append(round(sum(values) / len(values), 4))
    summary: dict[str, Any] = {
        "questions": len(rows),
        f"recall@{k}": _mean([r["recall"] for r in scored]),
        "recall@5": _mean([r["recall@5"] for r in scored]),
        f"all_gold@{k}": _mean([float(r["recall"] == 1.0) for r in scored]),
        f"recall@{k}_by_hop": by_hop,
        "recall_of_all_evidence": _mean([float(r.get("recall_pool", r["recall"])) for r in scored]),
        "scored_questions": len(scored),
        "avg_retrieval_calls": _mean([float(r.get("retrieval_calls") or 0) for r in retrieving]),
        "avg_charged_calls": _mean([float(r.get("charged_calls") or 0) for r in retrieving]),
        "avg_evidence_tokens": _mean([float(r.get("evidence_tokens") or 0) for r in retrieving]),
        "max_evidence_tokens": max((int(r.get("evidence_tokens") or 0) for r in rows), default=0),
        "avg_hops": _mean([float(r.get("hops") or 0) for r in retrieving]),
        "max_hops": max((int(r.get("hops") or 0) for r in rows), default=0),
        "over_hop_cap": sum(int(r.get("hops") or 0) > max_hops for r in rows),
        "avg_latency_ms": _mean([float(r.get("latency_ms") or 0) for r in rows]),
        "refused": sum(r.get("status") == "refused" for r in rows),
        "failed": sum(r.get("status") == "failed" for r in rows),
        "decisions": {
            "confusion": confusion(rows),
            "route_accuracy": _rate(sum(r.get("route") == r["expected_route"] for r in routed), len(routed)),
            "decision_accuracy": _rate(
                sum(r["decision"] == r["expected_route"] for r in labelled), len(labelled)
            ),
            "labelled": len(labelled),
        },
        "refusal": {
            "out_of_corpus_questions": len(out_of_corpus),
            "refusal_rate": _rate(
                sum(r.get("status") == "refused" for r in out_of_corpus), len(out_of_corpus)
            ),
            "in_corpus_questions": len(in_corpus),
            "false_refusal_rate": _rate(sum(r.get("status") == "refused" for r in in_corpus), len(in_corpus)),
            "direct_questions": len(direct),
            "direct_retrieval_calls": sum(int(r.get("retrieval_calls") or 0) for r in direct),
        },
        "audience": {
            "customer_questions": len(customer),
            "internal_leaks": sum(bool(r.get("internal_cited")) for r in customer),
            "agent_internal_citations": sum(
                len(r.get("internal_cited") or []) for r in rows if r.get("audience", "agent") != "customer"
            ),
            "injected_quoted": sum(bool(r.get("injected_quoted")) for r in rows),
        },
        "loop_health": {
            "stop_reasons": dict(sorted(stops.items(), key=lambda kv: (-kv[1], kv[0]))),
            "hops_histogram": {str(n): hist[n] for n in sorted(hist)},
            "follow_up_hops": len(follow_ups),
            "thrash_rate": _rate(sum(h["thrash"] for h in follow_ups), len(follow_ups)),
            "duplicate_evidence_rate": _rate(sum(h["already_seen"] for h in all_hops), fused),
        },
        "answers": {
            "scored": len(answers),
            "exact_match": _mean([a["em"] for a in answers]),
            "f1": _mean([a["f1"] for a in answers]),
            "contains": _mean([a["contains"] for a in answers]),
            "answer_first": _mean([a.get("first", 0.0) for a in answers]),
            "token_recall": _mean([a["token_recall"] for a in answers]),
        },
    }
    return summary
