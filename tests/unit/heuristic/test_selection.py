"""Final ranking: at most k, best first, independent of arrival order, and the bridge chain is kept."""

from __future__ import annotations

import pytest

from heuristic.selection import SelectionConfig, final_scores, rank_evidence, select_evidence
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence

QUESTION = "At the 2011 census, what was the population of the city where Kerry Saxby-Junna was born?"
ANCHOR = evidence("ksj#0", "Kerry Saxby-Junna", "Kerry Saxby-Junna is a retired race walker. She was born in "
                  "Young, New South Wales.", score=0.8, query=QUESTION)
TOWN = evidence("young#0", "Young, New South Wales", "Young is a town with 6,960 people at the 2011 census.",
                grade=Grade.INCORRECT, score=0.2, query=QUESTION)
NOISE = [evidence(f"n{i}#0", f"Census {i}", "The 2011 census counted people.", grade=Grade.AMBIGUOUS,
                  score=0.45 - i / 100, query=QUESTION) for i in range(10)]


def test_a_passage_the_anchor_links_to_is_ranked_in_despite_a_low_grade() -> None:
    ranked = rank_evidence(QUESTION, [*NOISE, TOWN, ANCHOR], k=5)
    assert [e.chunk_id for e in ranked][:2] == ["ksj#0", "young#0"]
    assert len(ranked) == 5


def test_ranking_does_not_depend_on_arrival_order() -> None:
    pool = [*NOISE, TOWN, ANCHOR]
    assert rank_evidence(QUESTION, pool, 6) == rank_evidence(QUESTION, list(reversed(pool)), 6)


def test_selected_evidence_fits_the_token_budget() -> None:
    from investigation.answers import evidence_tokens

    assert evidence_tokens(select_evidence(QUESTION, [*NOISE, TOWN, ANCHOR], 10, 60)) <= 60


def test_a_comparison_answer_cites_evidence_for_each_entity() -> None:
    question = "Are Medici and Senet both board games?"
    medici = evidence("m#0", "Medici (board game)", "Medici is a board game designed by Reiner Knizia.")
    senet = evidence("s#0", "Senet", "Senet is a board game from ancient Egypt.")
    answer = synthesize_answer(question, RouteDecision(route=Route.MULTI_PART, reason="t"), [medici, senet])
    assert {c.evidence_id for c in answer.citations} == {medici.id, senet.id}
    assert "[1]" in answer.text and "[2]" in answer.text and not answer.refused


def test_what_a_bridging_query_went_to_find_is_kept_despite_its_grade() -> None:
    question = "What is the name of the waterfall in the country where the Bubye River is found?"
    river = evidence(
        "bubye#0", "Bubye River", "The Bubye River is a river in Zimbabwe.", score=0.75, query=question
    )
    falls = [evidence(f"f{i}#0", f"Falls {i}", "A waterfall in some country.", grade=Grade.AMBIGUOUS,
                      score=0.5 - i / 100, query=question) for i in range(12)]
    victoria = evidence(
        "vic#0",
        "Victoria Falls",
        "Victoria Falls is a waterfall on the Zambezi in Zimbabwe.",
        grade=Grade.INCORRECT,
        score=0.3,
        hop=2,
        query="Zimbabwe waterfall",
    )
    ranked = [e.chunk_id for e in rank_evidence(question, [river, *falls, victoria], k=10)]
    assert "vic#0" in ranked and ranked[0] == "bubye#0"


def test_each_name_of_the_question_keeps_a_passage_that_mentions_it() -> None:
    question = "Our customer data has to stay in Frankfurt. What API rate limit do we get?"
    limits = [
        evidence(
            f"r{i}#0",
            "API rate limits",
            f"Rate limit rule {i} per workspace.",
            score=0.7 - i / 100,
            query=question,
        )
        for i in range(12)
    ]
    region = evidence(
        "regions#0",
        "Regions",
        "EU-1 is hosted in Frankfurt.",
        grade=Grade.INCORRECT,
        score=0.2,
        query=question,
    )
    assert "regions#0" in [e.chunk_id for e in rank_evidence(question, [*limits, region], k=10)]


WORRALL_Q = "The state where Henry Worrall died has how many congressional districts?"
WORRALL = evidence(
    "hw#0",
    "Henry Worrall (artist)",
    "Henry Worrall was an English-born painter. He died in Topeka, Kansas, in 1902.",
    score=0.65,
    query=WORRALL_Q,
)
DISTRICTS = [evidence(f"d{i}#0", f"Congressional district {i}", "Each state has congressional districts.",
                      grade=Grade.AMBIGUOUS, score=0.5 - i / 100, query=WORRALL_Q) for i in range(12)]


def test_a_passage_titled_by_the_bridged_entity_that_says_what_is_left_open_is_ranked_in() -> None:
    kansas = evidence("ks#0", "Kansas's congressional districts", "The state is divided into 4 congressional "
                      "districts.", grade=Grade.INCORRECT, score=0.3, query=WORRALL_Q)
    pool = [WORRALL, *DISTRICTS, kansas]
    assert "ks#0" in [e.chunk_id for e in rank_evidence(WORRALL_Q, pool, k=5)]
    without = SelectionConfig(chain_bonus=0.0)
    assert "ks#0" not in [e.chunk_id for e in rank_evidence(WORRALL_Q, pool, k=5, config=without)]


def test_a_chain_partner_named_in_the_title_outranks_one_named_only_in_the_text() -> None:
    titled = evidence(
        "t#0",
        "Kansas",
        "Kansas has 4 congressional districts.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=WORRALL_Q,
    )
    mentioned = evidence(
        "m#0",
        "Plains politics",
        "Kansas has 4 congressional districts.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=WORRALL_Q,
    )
    scores = final_scores(WORRALL_Q, [WORRALL, titled, mentioned])
    assert scores["t#0"] > scores["m#0"] > 0.3


def test_a_passage_that_names_the_bridged_entity_but_nothing_left_open_gets_no_chain_credit() -> None:
    idle = evidence(
        "i#0",
        "Topeka",
        "Topeka is a city on the Kansas River.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=WORRALL_Q,
    )
    assert final_scores(WORRALL_Q, [WORRALL, idle])["i#0"] == pytest.approx(
        0.3 + SelectionConfig().link_bonus
    )


def test_a_passage_naming_one_side_that_the_other_side_lists_ranks_in_for_an_intersection() -> None:
    question = "Who sang in both Harbour Lights and the band q(t)?"
    show = evidence("hl#0", "Harbour Lights (TV series)", "Harbour Lights was a sitcom. It starred Ana Roe, "
                    "Mira Dune Park and Tom Bell.", score=0.7, query=question)
    noise = [evidence(f"n{i}#0", f"Harbour Song {i}", "A band sang in a harbour.", grade=Grade.AMBIGUOUS,
                      score=0.5 - i / 100, query=question) for i in range(12)]
    member = evidence("mira#0", "Mira Dune", "Mira Dune is an actress, a former member of the band q(t).",
                      grade=Grade.INCORRECT, score=0.1, query="q(t) sang band")
    stranger = evidence("zed#0", "Zed Holm", "Zed Holm is a former member of the band q(t).",
                        grade=Grade.INCORRECT, score=0.1, query="q(t) sang band")
    ranked = [e.chunk_id for e in rank_evidence(question, [show, *noise, member, stranger], k=10)]
    assert "mira#0" in ranked and "zed#0" not in ranked


def test_a_bridging_querys_passage_naming_its_whole_entity_is_kept_before_look_alikes() -> None:
    question = "What is the most famous hotel in Zorvi's city of birth?"
    zorvi = evidence("zorvi#0", "Zorvi", "Zorvi is a singer born in North-East Valoria.", query=question)
    hotels = [
        evidence(f"h{i}#0", f"Hotel {i}", "A famous hotel in a city.", grade=Grade.AMBIGUOUS,
                 score=0.5 - i / 100, query=question)
        for i in range(12)
    ]
    query = "North-East Valoria famous hotel city birth"
    look_alikes = [
        evidence(f"v{i}#0", f"East Valoria {i}", "East Valoria is a region; the north has hills.",
                 grade=Grade.INCORRECT, score=0.3, hop=2, query=query)
        for i in range(3)
    ]
    nadiria = evidence("nadiria#0", "Nadiria", "Nadiria, formerly North East Valoria, is a country.",
                       grade=Grade.INCORRECT, score=0.2, hop=2, query=query)
    ranked = [e.chunk_id for e in rank_evidence(question, [zorvi, *hotels, *look_alikes, nadiria], k=10)]
    assert "nadiria#0" in ranked


def test_the_entity_a_bridging_query_went_to_find_is_its_leading_words_the_question_does_not_say() -> None:
    from heuristic.selection import bridge_name

    question = "What is the most famous hotel in Zorvi's city of birth?"
    assert bridge_name(question, "North-East Valoria famous hotel city birth") == " north east valoria "
    assert bridge_name(question, "The Grand Lark famous hotel") == " grand lark "
    assert bridge_name(question, "Valoria famous hotel city birth") == ""  # a word alone is no name
    assert bridge_name(question, "Booking guide famous hotel") == ""  # a topic, not a proper name


def test_the_passage_a_description_points_to_outranks_hubs_that_name_the_bridge_entity() -> None:
    # Bridge questions that describe the bridge entity instead of naming it: the passage saying what the
    # description says (and naming the entity a later hop went to find) is the chain's first link.
    question = "What language does the sculptor speak whose studio burned down after the spring fair?"
    guild = evidence("guild#0", "Velish Art Guild", "The Velish Art Guild lists Oren Vale among sculptors.",
                     grade=Grade.AMBIGUOUS, score=0.44, query=question)
    vale = evidence("vale#0", "Oren Vale", "Oren Vale is a sculptor. He speaks Velish.",
                    grade=Grade.INCORRECT, score=0.28, query=question)
    fire = evidence("fire#0", "Harbour Fire", "After the spring fair, the studio of Oren Vale burned down.",
                    grade=Grade.INCORRECT, score=0.40, query=question)
    roster = evidence("roster#0", "Guild roster", "Sculptors of the guild: Oren Vale, Ada Lune, Piet Morr.",
                      grade=Grade.INCORRECT, score=0.55, query=question)
    query = "Oren Vale language sculptor studio burned"
    later = evidence("lune#0", "Ada Lune", "Ada Lune is a sculptor.", grade=Grade.INCORRECT, score=0.2,
                     hop=2, query=query)
    pool = [guild, vale, fire, roster, later]
    scores = final_scores(question, pool)
    assert scores["fire#0"] > scores["roster#0"]
    off = final_scores(question, pool, SelectionConfig(described_bonus=0.0))
    assert off["fire#0"] < off["roster#0"] == pytest.approx(scores["roster#0"])


def test_no_description_credit_when_the_question_names_a_passage() -> None:
    # A passage the question names is where the chain starts; the description is resolved there.
    question = "What language does Oren Vale speak, the sculptor whose studio burned down after the fair?"
    guild = evidence("guild#0", "Velish Art Guild", "The Velish Art Guild lists Oren Vale among sculptors.",
                     grade=Grade.AMBIGUOUS, score=0.44, query=question)
    vale = evidence("vale#0", "Oren Vale", "Oren Vale is a sculptor. He speaks Velish.",
                    grade=Grade.INCORRECT, score=0.28, query=question)
    fire = evidence("fire#0", "Harbour Fire", "After the fair, the studio of Oren Vale burned down.",
                    grade=Grade.INCORRECT, score=0.40, query=question)
    later = evidence("lune#0", "Ada Lune", "Ada Lune is a sculptor.", grade=Grade.INCORRECT, score=0.2,
                     hop=2, query="Oren Vale language sculptor studio burned")
    pool = [guild, vale, fire, later]
    assert final_scores(question, pool)["fire#0"] == pytest.approx(
        final_scores(question, pool, SelectionConfig(described_bonus=0.0))["fire#0"]
    )
