"""A place the asker names is found through what contains it (heuristic/regions.py), on made-up passages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heuristic import regions
from heuristic.focus import missing_names
from heuristic.regions import as_written, containers, searched_as, within_mentioned, written
from heuristic.sufficiency import has_support
from tests.unit.investigation.fakes import evidence

RULES = evidence("rules#0", "Regional rules", "Unused leave is paid out at the end of employment in "
                 "California. Consumers in the EU may withdraw within 14 days. In Australia the pay date "
                 "moves to the previous business day.", score=0.6)


@pytest.mark.parametrize(
    ("place", "region"),
    [("San Diego", "California"), ("Munich", "Germany"), ("Dublin", "EU"), ("Melbourne", "Australia"),
     ("Texas", "United States"), ("Germany", "EU")],
)
def test_a_place_is_contained_by_its_state_country_and_union(place: str, region: str) -> None:
    assert region in containers(place)


def test_words_that_are_no_place_have_no_container() -> None:
    assert containers("Zorblet") == containers("Brix") == ()


def test_short_codes_count_only_in_capitals() -> None:
    assert written("US", "Payroll in the US runs weekly.")
    assert not written("US", "Contact us for a quote.")
    assert written("California", "in california, overtime …")


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("An employee at our San Diego store leaves with unused leave. Is it paid out?", []),
        ("I run a one-person business in Dublin. Can I withdraw from the contract?", []),
        ("Our Melbourne payday falls on a holiday. When are staff paid?", []),
        ("Our Toronto office has unused leave. Is it paid out?", ["Toronto"]),  # Canada: no rule written
        ("Is unused leave paid out for the Zorblet team?", ["Zorblet"]),  # no place: still missing
    ],
)
def test_a_place_whose_region_a_passage_mentions_is_not_missing(question: str, missing: list[str]) -> None:
    assert missing_names(question, [RULES]) == missing
    assert within_mentioned("San Diego", [RULES.text]) and not within_mentioned("Toronto", [RULES.text])


def test_a_question_about_a_place_whose_region_has_no_rule_stays_unsupported() -> None:
    assert not has_support("Do you run payroll for our Toronto office?", [RULES])


def test_a_company_legal_form_is_found_through_its_country() -> None:
    assert "Germany" in containers("GmbH") and "Australia" in containers("Pty Ltd")
    assert "United States" in containers("LLC") and "United Kingdom" in containers("PLC")  # in capitals too
    table = evidence("records#0", "Records", "| country | years |\n| Germany | 10 years |", score=0.6)
    assert missing_names("We're a GmbH. How long are our records kept?", [table]) == []
    other = evidence("records#1", "Records", "| country | years |\n| Canada | 6 years |", score=0.6)
    assert missing_names("We're a GmbH. How long are our records kept?", [other]) == ["GmbH"]


def test_a_town_or_legal_form_no_passage_mentions_is_asked_as_the_region_one_does() -> None:
    texts = [RULES.text, "| country | years |\n| Germany | 10 years |"]
    asked = as_written("An employee at our San Diego store leaves with 6 unused days. Paid out?", texts)
    assert asked == "An employee at our California store leaves with 6 unused days. Paid out?"
    table = ["| country | years |\n| Germany | 10 years |"]
    assert as_written("We're a GmbH. How long are records kept?", table) == ("We're a Germany. How long are "
                                                                             "records kept?")
    assert as_written("Our Melbourne payday is a holiday.", texts) == "Our Australia payday is a holiday."
    # a member state's town is under the Union's rules too, when a passage writes them
    irish = [*texts, "Ireland: PPS number."]
    assert as_written("A business in Dublin or a GmbH: can we withdraw?", irish) == (
        "A business in Ireland (EU) or a Germany (EU): can we withdraw?")
    assert as_written("A business in Dublin: can we withdraw?", [RULES.text]) == (
        "A business in EU: can we withdraw?")


def test_a_state_or_country_a_mentioned_place_or_no_place_stays_as_asked() -> None:
    # Texas is the level a rule is written at: a knowledge base with no Texas rule has none to give
    assert as_written("I switched rounding off in Texas; can I in Austin?", [RULES.text]) == (
        "I switched rounding off in Texas; can I in Austin?")  # Austin's Texas is not written either
    mentioned = "Our San Diego store is in California."
    assert as_written("Our San Diego store: is leave paid out?", [RULES.text, mentioned]) == (
        "Our San Diego store: is leave paid out?")
    assert as_written("Our Toronto and Zorblet teams: is leave paid out?", [RULES.text]) == (
        "Our Toronto and Zorblet teams: is leave paid out?")


def test_a_probe_for_a_place_also_searches_its_nearest_region() -> None:
    assert searched_as("San Diego") == "San Diego California"
    assert searched_as("Zorblet") == "Zorblet"


def test_the_places_are_read_from_a_table_built_once_from_geonames(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "build" / "places.json"
    monkeypatch.setattr(regions, "_TABLE", table)
    regions._table.cache_clear()
    try:
        places, states_and_countries = regions._table()
        assert places["san diego"][0] == "California" and "texas" in states_and_countries
        saved = json.loads(table.read_text(encoding="utf-8"))
        assert saved["places"]["san diego"] == list(places["san diego"])
        # read back as saved; a table from another GeoNames release or threshold is built again
        saved["places"]["san diego"] = ["Somewhere"]
        table.write_text(json.dumps(saved), encoding="utf-8")
        regions._table.cache_clear()
        assert regions.containers("San Diego") == ("Somewhere",)
        table.write_text(json.dumps({**saved, "key": "another release"}), encoding="utf-8")
        regions._table.cache_clear()
        assert regions.containers("San Diego")[0] == "California"
        table.write_text("{half a tab", encoding="utf-8")  # unreadable: built again too
        regions._table.cache_clear()
        assert regions.containers("San Diego")[0] == "California"
        assert json.loads(table.read_text(encoding="utf-8"))["key"] != "another release"
    finally:
        regions._table.cache_clear()


def test_a_big_town_is_also_known_by_its_initials_in_capitals() -> None:
    assert containers("LA")[0] == containers("L.A.")[0] == "California" and containers("NYC")[0] == "New York"
    assert containers("LAX") == containers("la") == containers("Qa") == ()  # an airport code, lower case
    asked = as_written("I switched rounding off in Texas; can I do the same for the LA people?", [RULES.text])
    assert asked == "I switched rounding off in Texas; can I do the same for the California people?"
