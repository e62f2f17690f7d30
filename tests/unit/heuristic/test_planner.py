"""Decomposition of comparisons, and bridging next-hop queries that never repeat an asked one."""

from __future__ import annotations

import pytest

from heuristic.planner import bridge_queries, part_queries, plan_question
from heuristic.router import route_question
from investigation.state import Grade, Plan, PlanKind, SubQuery
from investigation.text import query_key
from tests.unit.investigation.fakes import evidence

pytestmark = pytest.mark.unit

QUESTION = "Who was in charge of the country where the composer of Aschenbrodel was a citizen?"
ANCHOR = evidence("asch#0", "Aschenbrödel", "Aschenbrödel is a ballet composed by Johann Strauss II. It premiered "
                  "in Berlin in 1901 and was completed by Josef Bayer.")


def test_comparison_plan_keeps_the_original_and_one_subquery_per_entity_with_the_property() -> None:
    question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
    plan = plan_question(question, route_question(question))
    assert plan.kind == "decomposed"
    assert [s.text for s in plan.subqueries] == [
        question, "Christopher Nolan film directors", "Sathish Kalathil film directors"]


def test_a_lookup_plan_is_the_question_as_is() -> None:
    question = "When was Ada Lovelace born?"
    plan = plan_question(question, route_question(question))
    assert [s.text for s in plan.subqueries] == [question] and plan.original == question


def test_bridging_names_an_entity_absent_from_the_question_with_the_unresolved_part() -> None:
    queries = bridge_queries(QUESTION, [ANCHOR], [QUESTION])
    assert queries, "a bridge should be proposed"
    first = queries[0].text
    assert first.startswith("Johann Strauss II")
    assert "citizen" in first and "aschenbrodel" not in first.lower()
    assert len(queries) <= 2


def test_bridging_never_repeats_an_asked_query_or_entity() -> None:
    first = bridge_queries(QUESTION, [ANCHOR], [QUESTION])
    asked = [QUESTION, *(q.text for q in first)]
    again = bridge_queries(QUESTION, [ANCHOR], asked)
    asked_keys = {query_key(q) for q in asked}
    assert all(query_key(q.text) not in asked_keys for q in again)
    assert all(not q.text.startswith("Johann Strauss II") for q in again)


def test_bridging_follows_a_retrieved_link_instead_of_asking_for_it_again() -> None:
    strauss = evidence("js#0", "Johann Strauss II", "Johann Strauss II was an Austrian composer, a citizen of "
                       "the Austrian Empire.", grade=Grade.AMBIGUOUS, hop=2, query="Johann Strauss II citizen")
    queries = bridge_queries(QUESTION, [ANCHOR, strauss], [QUESTION, "Johann Strauss II citizen"])
    assert all("Johann Strauss II" not in q.text for q in queries)
    assert any("Austrian Empire" in q.text for q in queries)


def test_dates_and_aliases_of_the_subject_are_not_bridges() -> None:
    drew = evidence("drew#0", "Drew Fuller", 'Andrew Alan "Drew" Fuller (born May 19, 1980) is an American actor. '
                    'He is best known for the television series "Charmed".')
    queries = bridge_queries("Drew Fuller starred in a series that broadcast on what station?", [drew], [])
    assert queries[0].text.startswith("Charmed")
    assert not any(q.text.startswith(("May 19", "Andrew Alan")) for q in queries)


def test_part_queries_ask_for_missing_compared_entities_once() -> None:
    plan = Plan(original="Are A and B both x?", subqueries=(SubQuery(text="Are A and B both x?"),), kind=PlanKind.DECOMPOSED)
    assert [q.text for q in part_queries(plan, ["entity: Guitar World"], [])] == ["Guitar World"]
    assert part_queries(plan, ["entity: Guitar World"], ["guitar world"]) == []
