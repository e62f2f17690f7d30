"""A value asked of one named member of a group that the passages give only for its peers (made-up text)."""

from __future__ import annotations

import pytest

from heuristic.absent import asked_missing
from heuristic.siblings import value_only_for_peers
from heuristic.sufficiency import unsupported_names
from tests.unit.investigation.fakes import evidence

COURIERS = evidence("couriers#0", "Couriers", "Zorblet works with 5 couriers: Quikko, Roadrun, Ferrimo, "
                    "Velox Air and Slowpost. Each courier is chosen per shipment.")
LIMITS = evidence("limits#0", "Load limits", "Every courier has its own limit. Quikko carries loads up to "
                  "40 kg. Roadrun and Ferrimo carry loads up to 90 kg. A load over the limit is refused.")
PICKUPS = evidence("pickups#0", "Pickups", "You can book a pickup with Quikko, Roadrun and Velox Air from "
                   "the Pickups page.")
ZORBLET = [evidence(f"z{i}#0", f"Zorblet topic {i}", f"Zorblet keeps topic {i} simple.") for i in range(3)]
EVIDENCE = [COURIERS, LIMITS, PICKUPS, *ZORBLET]


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        # The limit is given for three of Velox Air's peers, never for Velox Air.
        ("What is the maximum weight Velox Air carries for a single load with Zorblet?", ["Velox Air"]),
        ("What is Velox Air's weight limit for a load?", ["Velox Air"]),
        # Given for the one asked: answered.
        ("What is the maximum weight Quikko carries for a single load?", []),
        # The value of something reached through the name, or a second question: not the name's value.
        ("What is the maximum weight of the loads that Velox Air picks up?", []),
        ("Does Velox Air carry loads, and what is the maximum weight?", []),
        # Nothing of a value asked.
        ("Does Velox Air carry loads?", []),
    ],
)
def test_a_value_given_only_for_the_peers_of_the_asked_name(question: str, missing: list[str]) -> None:
    assert value_only_for_peers(question, EVIDENCE) == missing


def test_one_peer_with_the_value_is_not_enough() -> None:
    limits = evidence("limits#0", "Load limits", "Quikko carries loads up to 40 kg.")
    assert value_only_for_peers("What is the maximum weight Velox Air carries for a load?",
                                [COURIERS, limits, PICKUPS, *ZORBLET]) == []


def test_the_peers_value_leaves_the_question_unsupported() -> None:
    question = "What is the maximum weight Velox Air carries for a single load?"
    assert asked_missing(question, EVIDENCE) == ["Velox Air"]
    assert unsupported_names(question, EVIDENCE) == ["Velox Air"]
