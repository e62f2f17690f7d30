"""Tokens, names, sentences: the text primitives every heuristic rests on."""

from __future__ import annotations

from investigation.text import (
    capitalised_spans,
    count_tokens,
    dates,
    entities,
    fold,
    split_sentences,
    stem,
)


def test_count_tokens_counts_words_and_punctuation() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("") == 0


def test_fold_strips_accents_and_case() -> None:
    assert fold("Aschenbrödel") == "aschenbrodel"


def test_names_keep_connectors_and_drop_question_words() -> None:
    spans = capitalised_spans("Who was the composer of Bank of America and Johann Strauss II?")
    assert spans == ["Bank of America", "Johann Strauss II"]


def test_possessive_ends_a_name_unless_a_name_follows() -> None:
    assert capitalised_spans("the state where Hello Love's performer died") == ["Hello Love"]
    assert "Woman's Viewpoint" in capitalised_spans("Are the Woman's Viewpoint and Pick Me Up British?")


def test_quoted_titles_come_first_and_swallow_their_words() -> None:
    names = entities('"Wonderland by Night" is a song by Bert Kaempfert')
    assert names[0] == "Wonderland by Night"
    assert "Night" not in names and "Bert Kaempfert" in names


def test_sentences_do_not_break_on_initials_or_abbreviations() -> None:
    text = "M. Ward is a singer. He met Mr. Smith in St. Louis. They played."
    assert split_sentences(text) == ["M. Ward is a singer.", "He met Mr. Smith in St. Louis.", "They played."]


def test_years_dates_and_stems() -> None:
    assert dates("premiered on September 23, 1962") == ["September 23, 1962"]
    assert stem("directed") == stem("director") == stem("directors")
