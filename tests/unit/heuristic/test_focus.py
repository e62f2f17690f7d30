"""A question's specific names, and whether the evidence mentions them (refusal in a one-product KB)."""

from __future__ import annotations

import pytest

from heuristic.focus import focus_names, missing_names
from heuristic.planner import probe_queries
from heuristic.sufficiency import has_support, judge_evidence
from investigation.state import Grade, Plan, QueryKind
from tests.unit.investigation.fakes import evidence

pytestmark = pytest.mark.unit

KB = [evidence("deploy#0", "Getting started", "Acme Cloud runs in US-1 and EU-1 (Frankfurt). Support answers "
               "Severity 1 tickets within 1 hour; we integrate with Microsoft Entra ID and the Team plan.",
               grade=Grade.AMBIGUOUS, score=0.48)]


def test_focus_names_are_specific_names_not_sentence_openers() -> None:
    assert focus_names("Security wants a 15 minute idle timeout. We're on Team - what plan?") == ["Team"]
    assert focus_names("Does your API support GraphQL queries?") == ["GraphQL"]
    assert focus_names("Is there an iOS or Android app?") == ["Android", "iOS"]
    assert focus_names("what does ERR_4033 mean") == ["ERR_4033"]


@pytest.mark.parametrize(("question", "missing"), [
    ("Do you provide a Kubernetes operator or Helm chart for running Acme Cloud on-premise?", ["Kubernetes", "Helm"]),
    ("Can we get notifications in Microsoft Teams instead of Slack?", ["Microsoft Teams", "Slack"]),
    ("What is the Sev 1 response time?", []),  # "Sev 1" abbreviates "Severity 1"
    ("Is Frankfurt in the EU-1 region?", []),
    ("Which region is Franfkurt in?", []),  # a misspelling of a word the evidence has
])
def test_missing_names(question: str, missing: list[str]) -> None:
    assert missing_names(question, KB) == missing


def test_an_unmentioned_name_is_probed_once_then_refused() -> None:
    question = "Does your API support GraphQL queries?"
    plan = Plan(original=question, subqueries=())
    judgment = judge_evidence(question, plan, KB)
    assert "absent: GraphQL" in judgment.missing_information and not judgment.sufficient
    assert judgment.absent == ("GraphQL",)
    probes = probe_queries(question, judgment.absent, [question])
    assert [p.text for p in probes] == ["GraphQL"] and probes[0].kind is QueryKind.PROBE
    assert probe_queries(question, judgment.absent, [question, "GraphQL"]) == []
    assert not has_support(question, KB)
    assert has_support("Is Frankfurt in the EU-1 region?", KB)


def test_one_odd_name_is_forgiven_when_the_rest_is_found_in_correct_evidence() -> None:
    question = "Did Amy Johnson feature in the Brittishh biopic They Flew Alone?"
    found = [evidence("a#0", "Amy Johnson", "Amy Johnson was an aviator. They Flew Alone is a film about her.",
                      score=0.8, hop=2)]
    assert missing_names(question, found) == ["Brittishh"]
    assert has_support(question, found)
