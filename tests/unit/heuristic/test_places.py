"""The place a chain question asks for: the region a location apposition ends with ("the state where …"),
the town it starts with ("X's city of birth"), a name ending in the kind ("the county where …")."""

from __future__ import annotations

from heuristic.mentions import mentions
from heuristic.places import asked_place, in_asked_role, promote_places
from tests.unit.investigation.fakes import evidence

SENTENCE = "Orla Venn won the Grey Medal near Tallowford, Brennland in 1871."


def test_the_kind_of_place_a_description_asks_for() -> None:
    assert asked_place("Which river crosses the state where Orla Venn won the Grey Medal?") == "state"
    assert asked_place("What county borders the county in which Tallowford lies?") == "county"
    assert asked_place("What is the largest hotel in Orla Venn's city of birth?") == "city"
    assert asked_place("Who directed the film that Orla Venn starred in?") == ""


def test_a_container_is_the_tail_of_a_location_apposition_and_a_town_its_head() -> None:
    assert in_asked_role("Brennland", SENTENCE, "state")
    assert not in_asked_role("Tallowford", SENTENCE, "state")
    assert in_asked_role("Tallowford", SENTENCE, "city")
    assert not in_asked_role("Grey Medal", SENTENCE, "country")
    # A list before the comma: the last item is the place the region contains.
    listed = "It rises in Ash District and Birch District, Qarnia."
    assert in_asked_role("Qarnia", listed, "country") and not in_asked_role("Ash District", listed, "country")


def test_a_suffixed_kind_is_a_name_ending_in_it() -> None:
    sentence = "Tallowford is a hamlet in Morrow County, Brennland."
    assert in_asked_role("Morrow County", sentence, "county")
    assert not in_asked_role("Brennland", sentence, "county")


def test_people_listed_with_commas_are_no_apposition_without_a_locative_word() -> None:
    assert not in_asked_role("Ida Marsh", "The cast was Tom Reed, Ida Marsh and Al Kew.", "country")


def test_promotion_puts_the_place_first_without_widening_the_gap_to_the_runner_up() -> None:
    found = {
        "grey medal": ("Grey Medal", 1.0), "brennland": ("Brennland", 0.4), "tallowford": ("Tallowford", 0.3)
    }
    promoted = promote_places(found, {"brennland"})
    assert promoted["brennland"][1] > promoted["grey medal"][1] == 1.0
    assert promoted["brennland"][1] < 1.05 and promoted["tallowford"][1] == 0.3
    assert promote_places(found, set()) is found


def test_mentions_of_a_passage_put_the_asked_region_first() -> None:
    text = "Orla Venn (1840–1901) was a sailor of the Royal Fleet. " + SENTENCE
    passage = evidence("venn#0", "Orla Venn", text)
    question = "Which river crosses the state where Orla Venn won the Grey Medal?"
    assert mentions(passage, question)[0][0] == "Brennland"
    other = "Which ship did Orla Venn sail on when she won the Grey Medal?"
    assert mentions(passage, other)[0][0] != "Brennland"


def test_a_list_of_places_is_no_apposition() -> None:
    sentence = "Expeditions went on in the Veldlands, Orsk, Tamar and Quill until 1890."
    assert not in_asked_role("Orsk", sentence, "country") and not in_asked_role("Veldlands", sentence, "city")
    assert in_asked_role("West Brennland", "It lies in Morrow County, West Brennland, Ostmark.", "state")
