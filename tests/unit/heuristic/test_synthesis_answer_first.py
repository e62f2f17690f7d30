"""Answer first, by kind of question (issue 10): the chain's end leads a multi-hop answer; a comparison states
both sides (and its verdict) in the first sentence; deadlines, durations and places are the asked values."""

from __future__ import annotations

import pytest

from cli.bench_metrics import first_sentence
from heuristic.kinds import answer_kind, focus_terms
from heuristic.referents import resolve_pronoun
from heuristic.synthesis import synthesize_answer
from heuristic.verdicts import both_verdict, is_yes_no, temporal_winner, yes_no_prefix
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
HOP = RouteDecision(route=Route.MULTI_HOP, reason="t")
PART = RouteDecision(route=Route.MULTI_PART, reason="t")


def test_the_end_of_a_chain_leads_a_multi_hop_answer() -> None:
    question = "Lantern Songs is the second album by a singer-songwriter from what state?"
    album = evidence("lantern#0", "Lantern Songs", (
        "Lantern Songs, released in 2004, is the second album by singer-songwriter Ada Brook. "
        "The title refers to a childhood lantern festival."), score=0.9)
    singer = evidence("brook#0", "Ada Brook", (
        "Ada Brook (born 1970) is a singer-songwriter and pianist from Eugene, Oregon. "
        "She has released six albums."), grade=Grade.AMBIGUOUS, score=0.45, hop=2, query="Ada Brook state")
    other = evidence(
        "other#0",
        "Night Roads",
        "Night Roads is the second album by singer-songwriter Tom Vale.",
        grade=Grade.AMBIGUOUS,
        score=0.5,
    )
    answer = synthesize_answer(question, HOP, [album, other, singer])
    first = first_sentence(answer.text)
    assert "Oregon" in first, answer.text
    assert "Ada Brook" in answer.text.split("]", 1)[1]  # the link follows: the chain reads answer → link


def test_a_yes_no_comparison_says_yes_or_no_with_both_sides_in_the_first_sentence() -> None:
    games = [evidence("medo#0", "Medo", "Medo is a German-style board game by Ann Kraus.", score=0.8),
             evidence("senu#0", "Senu", "Senu is a board game from ancient Egypt.", score=0.8)]
    answer = synthesize_answer("Are Medo and Senu both board games?", PART, games)
    first = first_sentence(answer.text)
    assert first.startswith("Yes: ") and "Medo" in first and "Senu" in first

    directors = [
        evidence("vida#0", "Karl Vida", "Karl Vida was an American film director.", score=0.8),
        evidence("czi#0", "Geza Cziff", "Geza Cziff was a Hungarian and Austrian film director.", score=0.8),
    ]
    answer = synthesize_answer("Are Karl Vida and Geza Cziff both American directors?", PART, directors)
    assert first_sentence(answer.text).startswith("No: ")


def test_a_question_that_is_not_about_both_gets_no_verdict() -> None:
    plans = [evidence("team#0", "Team", "Team costs $15 per seat per month.", score=0.8),
             evidence("biz#0", "Business", "Business costs $35 per seat per month.", score=0.8)]
    answer = synthesize_answer("Can you compare the seat prices of Team and Business?", PART, plans)
    assert not answer.text.startswith(("Yes", "No"))
    assert "$15" in first_sentence(answer.text) and "$35" in first_sentence(answer.text)


def test_which_came_first_leads_with_the_earlier_entity() -> None:
    bands = [
        evidence(
            "diablo#0", "Circus Diablo", "Circus Diablo is an American rock band formed in 2006.", score=0.8
        ),
        evidence("exies#0", "The Exies", "The Exies were an American rock band formed in 1997.", score=0.8),
    ]
    answer = synthesize_answer("Which band was formed first, Circus Diablo or The Exies?", PART, bands)
    assert answer.text.startswith("The Exies were")
    assert "Circus Diablo" in first_sentence(answer.text)


def test_verdicts_read_each_entitys_own_sentences() -> None:
    assert is_yes_no("X has an OBE. Does Y also have one?") and not is_yes_no(
        "Are both breeds from which century?"
    )
    about = [
        ["Nantong is a city in Jiangsu province, China."],
        ["Jingdezhen is a city in Jiangxi province, China."],
    ]
    assert both_verdict("Are Nantong and Jingdezhen in the same province?", ["Nantong", "Jingdezhen"], about,
                        frozenset({"china"})) is False
    about = [["Ann Gold is the singer of Alphaville."], ["Bo Rhee sang with Alphaville in 1990."]]
    assert (
        both_verdict("Are Ann Gold and Bo Rhee members of the same band?", ["Ann Gold", "Bo Rhee"], about)
        is True
    )
    assert temporal_winner("Who is younger, A or B?", [["A was born in 1939."], ["B was born in 1975."]]) == 1
    assert temporal_winner("Which is larger, A or B?", [["1939"], ["1975"]]) is None


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("By when must a customer submit an SLA credit claim?", "within 30 days after the end of the month"),
        ("What's the default idle session timeout?", "Idle timeout: 7 days."),
        ("Transfiguration is an album by a singer from what state?", "He is a singer from Portland, Oregon."),
    ],
)
def test_deadlines_durations_and_places_are_recognised_as_the_asked_value(
    question: str, sentence: str
) -> None:
    kind = answer_kind(question)
    assert kind is not None and kind.search(sentence)


def test_the_deadline_leads_not_the_consequence_of_missing_it() -> None:
    sla = evidence(
        "sla#4",
        "Service Level Agreement",
        (
            "Late claims are declined and customers are told the claim came too late. "
            "Open a ticket with the category SLA credit within 30 days after the end of the calendar month "
            "in which "
            "the downtime occurred."
        ),
    )
    answer = synthesize_answer("By when must a customer submit an SLA credit claim?", LOOKUP, [sla])
    assert "30 days" in first_sentence(answer.text)


def test_the_default_duration_leads_not_how_to_change_it() -> None:
    sessions = evidence("sessions#0", "Session timeouts", (
        "Owners and Admins on Business can change the idle session timeout under Settings. "
        "Idle timeout: 7 days. Any value from 15 minutes to 30 days is allowed."))
    answer = synthesize_answer("What's the default idle session timeout?", LOOKUP, [sessions])
    assert "7 days" in first_sentence(answer.text)


def test_a_chain_end_says_what_the_asking_clause_asks_not_what_identifies_the_entity() -> None:
    question = "The manuscript of Sonata K 12 is in the hand of a German musician whose godfather is whom?"
    sonata = evidence("k12#0", "Sonata K 12", (
        "The manuscript of Sonata K 12 is in the hand of Carl Anton Berg."), score=0.9)
    berg = evidence(
        "berg#0",
        "Carl Anton Berg",
        (
            "Carl Anton Berg (1714 – 1788) was a German musician and composer.\n\n"
            "His second name was given in honour of his godfather Georg Fell."
        ),
        grade=Grade.AMBIGUOUS,
        score=0.45,
        hop=2,
        query="Carl Anton Berg godfather",
    )
    answer = synthesize_answer(question, HOP, [sonata, berg])
    assert "Georg Fell" in first_sentence(answer.text), answer.text


def test_a_topic_title_is_no_chain_link_in_a_support_article() -> None:
    question = "We need SAML single sign-on. How many labels per month does the plan that offers it include?"
    plans = evidence(
        "plans#0",
        "Plans and pricing",
        (
            "SAML single sign-on is included in Scale. "
            "Scale costs $299 per month and includes 20,000 labels per month and batch label printing."
        ),
        score=0.8,
    )
    batch = evidence("batch#0", "Batch label printing", "Accounts can buy up to 500 labels in one batch.",
                     score=0.6)
    answer = synthesize_answer(question, HOP, [plans, batch])
    assert "20,000" in first_sentence(answer.text), answer.text


def test_a_measured_quantity_is_answered_by_a_number_next_to_it_not_a_birth_year() -> None:
    question = "At the 2011 census, what was the population of the town where Kerry Dale was born?"
    kerry = evidence("kerry#0", "Kerry Dale", "Kerry Dale (born 2 June 1961) is a retired race walker. "
                     "She was born in Younge, New South Wales.", score=0.9)
    town = evidence(
        "younge#0",
        "Younge",
        "Younge is a town in New South Wales. At the 2011 census, Younge had a population of 6,960.",
        grade=Grade.AMBIGUOUS,
        score=0.5,
        hop=2,
    )
    answer = synthesize_answer(question, HOP, [kerry, town])
    assert "6,960" in first_sentence(answer.text), answer.text


def test_may_the_modal_verb_is_no_date_and_a_relative_where_asks_no_place() -> None:
    deadline = answer_kind("By when must a customer submit a claim?")
    assert deadline is not None and not deadline.search("team leads may approve one exception")
    assert deadline.search("due on 3 May")
    population = answer_kind("What was the population of the city where she was born?")
    assert population is not None and population.search("a population of 6,960")
    assert not population.search("born in Younge")


def test_a_chain_continues_through_a_sentence_that_mentions_the_bridge_name() -> None:
    question = "Who was the first president of the association which published Journal of Mind Studies?"
    journal = evidence(
        "jms#0",
        "Journal of Mind Studies",
        (
            "The Journal of Mind Studies is an academic journal published by the Northern Psychological "
            "Association."
        ),
        score=0.9,
    )
    essay = evidence("youth#0", "Youth", (
        "The study of youth began with a book by Granville Hale. "
        "Hale, who was the first president of the Northern Psychological Association, saw youth as turmoil."),
        grade=Grade.INCORRECT, score=0.4)
    answer = synthesize_answer(question, HOP, [journal, essay])
    assert "Hale" in first_sentence(answer.text), answer.text


@pytest.mark.parametrize(
    ("question", "focus"),
    [
        (
            "Who was the first president of the association which published Journal of X?",
            {"first", "president", "associ"},
        ),
        ("The manuscript is in the hand of a German musician whose godfather is whom?", {"godfath"}),
        (
            "At the 2011 census, what was the population of the city where Kerry Dale was born?",
            {"city", "popul"},
        ),
    ],
)
def test_the_focus_is_the_asking_clause_not_a_relative_one(question: str, focus: set[str]) -> None:
    assert focus_terms(question) == focus


def test_a_leading_pronoun_becomes_the_passages_name_unless_the_passage_is_about_a_work() -> None:
    assert (
        resolve_pronoun("He was a Formula One driver.", "Eddie Irvine")
        == "Eddie Irvine was a Formula One driver."
    )
    assert resolve_pronoun("Its roof is green.", "Tower Hall") == "Tower Hall's roof is green."
    assert resolve_pronoun("He wrote it in 1899.", "Aschenbrodel", work=True) == "He wrote it in 1899."
    assert resolve_pronoun("He was born in Oslo.", "") == "He was born in Oslo."  # a topic title names no one
    driver = evidence("irvine#0", "Eddie Irvine", "Eddie Irvine (born 1965) is a racing driver.\n\n"
                      "He was runner-up in the 1999 championship.", score=0.8)
    answer = synthesize_answer("Who was runner-up in the 1999 championship?", LOOKUP, [driver])
    assert first_sentence(answer.text).startswith("Eddie Irvine was runner-up"), answer.text


@pytest.mark.parametrize(
    ("question", "lead", "prefix"),
    [
        (
            "Can we pay our EUR invoices by SEPA direct debit?",
            "We accept cards, SEPA Direct Debit (EUR) and bank transfer for annual invoices.",
            "Yes: ",
        ),
        (
            "Are gift cards covered by shipping insurance?",
            "Cash, gift cards and perishable goods are never covered.",
            "No: ",
        ),
        (
            "Does Parcelo support Purolator shipments?",
            "Parcelo connects to 14 carriers: USPS, UPS and FedEx.",
            "",
        ),
        ("Is the export in CSV or JSON?", "Exports are CSV files.", ""),  # a choice, not a yes/no
    ],
)
def test_a_yes_no_question_gets_a_verdict_only_when_the_lead_sentence_gives_one(
    question: str, lead: str, prefix: str
) -> None:
    assert yes_no_prefix(question, lead) == prefix


def test_a_comparison_side_can_be_a_sentence_under_the_entitys_heading() -> None:
    plans = evidence("plans#0", "Plans and pricing", (
        "## Team\n\nTeam adds MFA enforcement and an audit log.\n\nPrice: $15 per seat per month.\n\n"
        "## Business\n\nPrice: $35 per seat per month."), score=0.8)
    answer = synthesize_answer("Can you compare the seat prices of Team and Business?", PART, [plans])
    assert "$15" in first_sentence(answer.text) and "$35" in first_sentence(answer.text), answer.text


def test_a_works_they_are_its_performers_and_which_date_asks_a_date() -> None:
    assert (
        resolve_pronoun("They recorded it in Nashville.", "Dear Brother", work=True)
        == "They recorded it in Nashville."
    )
    assert (
        resolve_pronoun("It was released in 1950.", "Dear Brother", work=True)
        == "Dear Brother was released in 1950."
    )
    kind = answer_kind("Chiang Kai-shek died on which date?")
    assert kind is not None and kind.search("(October 31, 1887 – April 5, 1975)")
    century = answer_kind("Both breeds were developed during which century?")
    assert century is not None and century.search("originated in Texas in the mid-19th century")
