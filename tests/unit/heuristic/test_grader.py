"""CRAG bands by lexical + embedding agreement with the ORIGINAL question; deterministic evidence ids."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristic.grader import band, grade_passages, resolves_bridge
from investigation.citations import evidence_id
from investigation.state import Grade
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence, passage

QUESTION = "Who directed the film Maximum Overdrive?"


def vectorise(texts: Sequence[str]) -> np.ndarray:
    return np.asarray(BagOfWordsEmbedder().embed(texts), dtype=np.float32)


def test_bands_follow_the_thresholds() -> None:
    assert band(0.9) is Grade.CORRECT
    assert band(0.45) is Grade.AMBIGUOUS
    assert band(0.1) is Grade.INCORRECT


def test_grading_separates_relevant_from_irrelevant_passages() -> None:
    good = passage("mo#0", "Maximum Overdrive", "Maximum Overdrive is a 1986 film written and directed by "
                   "Stephen King.")
    bad = passage("tea#0", "Green tea", "Green tea is a type of tea made from leaves of Camellia sinensis.")
    graded = grade_passages(QUESTION, [good, bad], 1, {}, vectorise)
    assert [e.grade for e in graded] == [Grade.CORRECT, Grade.INCORRECT]
    assert graded[0].score > graded[1].score
    assert graded[0].query == QUESTION and graded[0].hop == 1


def test_evidence_ids_are_stable_and_deterministic() -> None:
    assert evidence_id("mo#0") == evidence_id("mo#0") != evidence_id("mo#1")
    assert evidence_id("mo#0").startswith("ev_") and len(evidence_id("mo#0")) == 13
    p = passage("mo#0", "Maximum Overdrive", "A film by Stephen King.")
    first = grade_passages(QUESTION, [p], 1, {}, vectorise)
    second = grade_passages(QUESTION, [p], 1, {}, vectorise)
    assert first == second and first[0].id == evidence_id("mo#0")


def test_a_bridged_passage_counts_its_resolved_entity_as_part_of_the_question() -> None:
    question = "What state did the director of Maximum Overdrive live in?"
    king = passage("sk#0", "Stephen King", "Stephen King is an author who lives in Bangor, Maine.")
    sub = "Stephen King state live"
    bridged = grade_passages(question, [king], 2, {"sk#0": sub}, vectorise)[0]
    plain = grade_passages(question, [king], 2, {}, vectorise)[0]
    assert bridged.score > plain.score
    assert resolves_bridge(question, evidence("sk#0", "Stephen King", "…", query=sub))
    assert not resolves_bridge(question, evidence("x#0", "Bangor", "…", query=sub))


def test_a_value_asked_of_an_unknown_member_is_graded_against_the_question_without_it() -> None:
    # Value questions qualified by a member no passage knows ("… on the Drifter tier?" where the tiers are
    # Cove and Bay): the passage stating the value for every tier answers, so it is graded without it.
    question = "How long are drafts kept on the Drifter tier?"
    drafts = passage("drafts#1", "Drafts", "Drafts are kept for 45 days, then purged.")
    tiers = passage("tiers#1", "Tiers", "Harbour has two tiers, Cove and Bay.")
    graded = grade_passages(question, [drafts, tiers], 1, {}, vectorise)
    assert graded[0].grade is Grade.CORRECT
    assert graded[1].grade is Grade.INCORRECT
    # A known member keeps the whole question: nothing is dropped.
    known = passage("cove#1", "Cove", "The Cove tier keeps drafts for 60 days.")
    plain = grade_passages("How long are drafts kept on the Cove tier?", [drafts, known], 1, {}, vectorise)
    assert plain[0].score < graded[0].score


def test_the_words_a_ticket_tells_its_story_with_count_only_where_a_passage_has_them() -> None:
    # A ticket that tells what happened ("she says it came back a while ago, I still need …") is graded on
    # the matter it asks about: the passage that answers says none of the telling words, and is not marked
    # down for it; a passage that does say one ("needs") still gets it counted.
    from heuristic.grader import _graded_agreement, graded_terms, telling_stems
    from investigation.text import stem

    told = "A courier says the voucher I got a while ago came back. I still need to redeem it: is it valid?"
    assert {stem(w) for w in ("says", "got", "ago", "came", "still", "need")} == telling_stems(told)
    assert not telling_stems("Is Still included in the Need plan?")  # capitalised: names, kept
    answer = passage("vouchers#0", "Vouchers", "A voucher can be redeemed for 30 days; a courier returns "
                     "expired ones.")
    other = passage("fees#0", "Fees", "Courier fees are charged per parcel.")
    terms = graded_terms(told)
    plain = {t: w for t, w in terms.items() if t not in telling_stems(told)}
    lenient = _graded_agreement(terms, answer.title, answer.text, telling_stems(told))
    assert lenient == _graded_agreement(plain, answer.title, answer.text)
    assert lenient > _graded_agreement(terms, answer.title, answer.text)
    graded = grade_passages(told, [answer, other], 1, {}, vectorise)
    assert [e.grade for e in graded] == [Grade.CORRECT, Grade.INCORRECT]
    needs = passage("plans#0", "Plans", "Redeeming a voucher needs the Pro plan.")
    with_need = grade_passages("Which plan do I need to redeem a voucher?", [needs], 1, {}, vectorise)[0]
    without = passage("plans#1", "Plans", "Redeeming a voucher is on the Pro plan.")
    assert with_need.score > grade_passages("Which plan do I need to redeem a voucher?", [without], 1, {},
                                            vectorise)[0].score


def test_a_date_asked_is_not_looked_for_as_the_word_date() -> None:
    # Release notes and policies give a date without saying "date": "On what date …?", "which day …?" ask
    # for one. "At what time …?" keeps "time" (a time of day is written "… local time"), and "what year"
    # keeps "year" (an article's "in the year of …" may be what tells its date from the others).
    from heuristic.grader import asking_stems

    assert asking_stems("On what date did the Harbour 3 release come out?") == {"date"}
    assert asking_stems("On which day of the month are drafts purged?") == {"day"}
    assert asking_stems("At what time are drafts purged?") == set()
    assert asking_stems("In which year was the Cove tier added?") == set()
    asked = "On what date did the release that added offline drafts come out?"
    notes = passage("notes#0", "Harbour release notes", "Harbour 3 — 2025-02-11: New: offline drafts.")
    assert grade_passages(asked, [notes], 1, {}, vectorise)[0].grade is not Grade.INCORRECT


def test_a_version_said_in_words_is_graded_as_release_notes_write_it() -> None:
    from heuristic.grader import _graded_question, graded_terms

    assert "v1" in graded_terms(_graded_question("When was version 1 of the API retired?"))
    assert "5.4" in graded_terms(_graded_question("What did version 5.4 change?"))
    in_words = "When does version 1 of the API stop answering?"
    as_written = "When does v1 of the API stop answering?"
    assert graded_terms(_graded_question(in_words)) == graded_terms(_graded_question(as_written))


def test_a_lower_case_identifier_weighs_like_a_name() -> None:
    # An event or field name written with dots ("payrun.paid", "invoice.failed") tells what is asked as much
    # as a name; a hyphenated word does not.
    from heuristic.grader import weighted_terms

    terms = weighted_terms("Was the payrun.paid event sent? Check the invoice.failed one and the e-mail.")
    assert terms["payrun.paid"] == 2.0 and terms["invoice.fail"] == 2.0
    assert terms["e-mail"] == 1.0 and terms["event"] == 1.0
    assert weighted_terms("Show the invoices of ana@shop.io")["shop.io"] == 1.0  # a domain


def test_a_lifetime_asked_by_its_state_is_graded_on_the_thing_alone() -> None:
    # "How long do vouchers stay usable?": the passage gives the voucher's duration in its own words.
    from heuristic.grader import asking_stems

    assert asking_stems("How long do those vouchers stay usable?") == {"long", "stay", "usable"}
    assert asking_stems("How long does the trial last?") == {"long", "last"}
    # A state with more after it is what is asked about, not how: kept.
    assert asking_stems("How long do invoices remain unpaid before suspension?") == {"long"}
    assert asking_stems("For how long do you keep backups?") == {"long"}  # what is kept is asked
    voucher = passage("vouchers#0", "Vouchers", "A voucher is valid for 30 days after it is sent.")
    fees = passage("fees#0", "Fees", "Courier fees are charged per parcel.")
    graded = grade_passages("How long do those vouchers stay usable?", [voucher, fees], 1, {}, vectorise)
    assert [e.grade for e in graded] == [Grade.CORRECT, Grade.INCORRECT]
