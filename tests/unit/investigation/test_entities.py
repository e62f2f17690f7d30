"""Entity keys of a chunk or a question (multi-hop bridges, support products, plans and codes), on made-up
text; and which engines a hop's chord holds."""

from __future__ import annotations

from investigation.entities import ENGINE, entities, hop_engines, normalise, seed_query
from investigation.state import Evidence, Grade, QueryKind
from tasks.next import hop_slots


def _evidence(title: str, text: str, grade: Grade = Grade.CORRECT, score: float = 0.5) -> Evidence:
    return Evidence(id=title, chunk_id=title, source_id=title, title=title, text=text, score=score,
                    grade=grade, hop=1, query="q")


def test_multi_word_names_keep_their_joiners_and_lose_sentence_starters() -> None:
    # Multi-hop bridge: the work named in one passage is the title of another.
    assert entities("Who founded the society that publishes Annals of Quiet Harbours?") == [
        "annals of quiet harbours"]
    assert entities("The Velvet Lanterns toured Nordmark in 1971.") == ["velvet lanterns", "nordmark"]


def test_two_names_joined_by_and_are_two_entities() -> None:
    # Comparison questions name both sides: each is its own node.
    assert entities("Were Orla Quennell and Tamsin Berrow both cartographers?") == [
        "orla quennell",
        "tamsin berrow",
    ]


def test_titles_quoted_names_and_codes_are_entities() -> None:
    # Support questions: a product named in quotes, a plan, an error code.
    text = 'Error ZX-4021 appears when the "Night Ledger" export runs on the Harbour plan. Yes, really.'
    keys = entities(text, title="Exports reference")
    assert keys[0] == "exports reference"
    assert {"night ledger", "zx 4021", "harbour"} <= set(keys)
    assert "yes" not in keys and "really" not in keys


def test_short_sentence_starters_and_common_words_are_not_entities() -> None:
    assert entities("Add a shift. Use the app. It works.") == []
    assert entities("Q: Can I pay weekly? A: Yes.") == []


def test_sentences_do_not_run_into_each_other() -> None:
    assert entities("It ships from Portwyn. Marrow Bay gets it next.") == ["portwyn", "marrow bay"]


def test_normalise_folds_case_accents_punctuation_and_a_leading_the() -> None:
    assert normalise("The Café Ódin, Ltd.") == "cafe odin ltd"
    assert normalise("ZX_4021") == normalise("zx-4021") == "zx 4021"


def test_only_follow_up_hops_add_the_entities_engine() -> None:
    engines = ["bm25", "vector", ENGINE]
    assert hop_engines(engines, 1) == ["bm25", "vector"]
    assert hop_engines(engines, 2) == engines
    assert hop_engines(["bm25", "vector"], 3) == ["bm25", "vector"]


def test_a_follow_up_hop_seeds_its_entity_search_with_the_names_the_relevant_evidence_introduces() -> None:
    # Multi-hop bridge: the first passage names the place whose own passage answers the question.
    question = "Who governed the region where the Quillon Dam stands when it joined the union?"
    evidence = [
        _evidence("Quillon Dam", "The Quillon Dam is a dam in Marrow County, Estravia, run by Halden Power."),
        _evidence("Halden Power", "Halden Power is a utility in Varnholt.", grade=Grade.AMBIGUOUS),
        _evidence("Otter Creek", "Otter Creek flows through Pellmoor.", grade=Grade.INCORRECT, score=0.9),
    ]
    query = seed_query(question, evidence)
    assert query is not None and query.kind is QueryKind.ENTITIES
    # The best passage's names first (not the question's own, not a retrieved passage's title), then the
    # next relevant passage's; nothing of a passage graded incorrect.
    assert entities(query.text) == ["marrow county", "estravia", "varnholt"]
    # The question's words rank what it finds, but those of the passages it starts from: found already.
    assert "governed" in query.text and "union" in query.text and "quillon" not in query.text


def test_names_the_question_holds_inside_a_longer_name_and_dates_are_no_seeds() -> None:
    # "Inspector Vane in Grey Harbour" is one span of the question: "Grey Harbour" is still the question's.
    question = "Who did the actor who played Inspector Vane in Grey Harbour marry?"
    evidence = [_evidence("Tobias Wren", "Grey Harbour starred Tobias Wren from March. He married Ida Moss.")]
    query = seed_query(question, evidence)
    assert query is not None and entities(query.text) == ["ida moss"]


def test_no_entity_search_when_the_evidence_names_nothing_new() -> None:
    question = "When was the Quillon Dam built?"
    assert seed_query(question, [_evidence("Quillon Dam", "The Quillon Dam was built in 1931.")]) is None
    assert seed_query(question, [_evidence("Dam records", "Quillon Dam: built in 1931.")]) is None
    assert seed_query(question, []) is None


def test_only_the_entity_query_searches_the_entities_engine_and_only_it() -> None:
    queries = [{"text": "Halden Power union", "kind": "bridge"},
               {"text": "governed Marrow County", "kind": QueryKind.ENTITIES.value}]
    assert hop_slots(queries, ["bm25", "vector", ENGINE]) == ((0, "bm25"), (0, "vector"), (1, ENGINE))
    # The entity slot takes the place of the other engines for a later sub-query: the hop costs no more.
    two = [queries[0], {"text": "Estravia union", "kind": "bridge"}, queries[1]]
    assert hop_slots(two, ["bm25", "vector", ENGINE]) == (
        (0, "bm25"), (0, "vector"), (1, "bm25"), (2, ENGINE))
    assert len(hop_slots(two, ["bm25", "vector", ENGINE])) == len(hop_slots(two[:2], ["bm25", "vector"]))
    # Without the engine, the entity query has no slot; without an entity query, the engine has none.
    assert hop_slots(queries, ["bm25", "vector"]) == ((0, "bm25"), (0, "vector"))
    assert hop_slots(queries[:1], ["bm25", ENGINE]) == ((0, "bm25"),)
