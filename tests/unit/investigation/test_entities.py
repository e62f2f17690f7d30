"""Entity keys of a chunk or a question (multi-hop bridges, support products, plans and codes), on made-up
text; and which engines a hop's chord holds."""

from __future__ import annotations

from investigation.entities import ENGINE, entities, hop_engines, normalise


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
