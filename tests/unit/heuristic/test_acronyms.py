"""An acronym of the question ("NL", "ZQ") is held by a sentence that spells it out ("Northern Lands"), so a
regional table's spelled-out row can lead. Made-up text."""

from __future__ import annotations

from heuristic.acronyms import spelled_out
from heuristic.focus import missing_terms
from heuristic.pick_scoring import candidate_sentences
from heuristic.synthesis import synthesize_answer
from investigation.state import Route, RouteDecision
from investigation.text import content_stems
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
FOUND = [
    evidence("ferry#1", "Ferry schedules",
             "NL ferries on the Gold pass can sail at night, which moves the NL cut-off to 1 hour. "
             "Each region keeps its logbooks as long as its harbour law requires."),
    evidence("logs#1", "Logbook retention",
             "Southern Isles: logbooks kept 2 years; cargo lists kept 5 years. "
             "Northern Lands: logbooks kept 4 years; cargo lists kept 3 years."),
]


def test_a_spelled_out_name_holds_the_acronym() -> None:
    question = "How long are cargo lists kept in the NL?"
    held = {c.text: c.stems for c in spelled_out(question, candidate_sentences(question, FOUND))}
    assert "nl" in held["Northern Lands: logbooks kept 4 years; cargo lists kept 3 years."]
    assert "nl" not in held["Southern Isles: logbooks kept 2 years; cargo lists kept 5 years."]
    # No acronym in the question: the sentences are as they were.
    plain = "How long are cargo lists kept?"
    assert spelled_out(plain, candidate_sentences(plain, FOUND)) == candidate_sentences(plain, FOUND)


def test_the_spelled_out_row_leads() -> None:
    answer = synthesize_answer("How long are cargo lists kept in the NL?", LOOKUP, FOUND)
    assert answer.text.startswith("Northern Lands: logbooks kept 4 years; cargo lists kept 3 years")


def test_a_technical_acronym_holds_the_everyday_words_a_ticket_says_it_in() -> None:
    # "by text message" where the help desk writes "SMS": mentioned, not missing, and held by its sentence.
    found = [evidence("keys#0", "Zorbo sign-in",
                      "Zorbo supports authenticator apps and hardware keys; SMS codes are not offered. "
                      "Recovery codes are shown once.")]
    question = "Our crew have no phones. Can they receive their sign-in codes by text message instead?"
    assert missing_terms(question, found) == []
    assert missing_terms("Can they receive their sign-in codes by carrier pigeon?", found) != []
    held = {c.text: c.stems for c in spelled_out(question, candidate_sentences(question, found))}
    sms = next(t for t in held if "SMS" in t)
    assert content_stems("text message") <= held[sms]
    assert not content_stems("text message") & held[next(t for t in held if "Recovery" in t)]
