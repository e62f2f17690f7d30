"""Questions that ask for a quantity in some unit ("how much clock skew"), and questions that retell the
asker's
own numbers and then ask two things joined by "and" (issue 10): the outcome leads, both asks are answered."""

from __future__ import annotations

import pytest

from cli.bench_metrics import first_sentence
from heuristic.kinds import answer_kind, ask_clauses
from heuristic.pick_scoring import candidate_sentences as _candidates
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
HOP = RouteDecision(route=Route.MULTI_HOP, reason="t")


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        (
            "How much clock drift does the gateway tolerate?",
            "Token timestamps are checked with a tolerance of 90 seconds.",
        ),
        ("How much notice do you give before an upgrade?", "Upgrades are announced at least 48 hours ahead."),
        ("How much storage does Basic include?", "Basic includes 5 GB of storage."),
    ],
)
def test_how_much_of_a_mass_noun_asks_for_a_quantity_in_any_unit(question: str, sentence: str) -> None:
    kind = answer_kind(question)
    assert kind is not None and kind.search(sentence)


def test_a_quantity_question_leads_with_the_quantity_not_the_list_of_causes() -> None:
    question = "Our logins fail with GW_7001 - how much clock drift do you tolerate?"
    codes = evidence(
        "codes#0",
        "Error codes",
        (
            "GW_7001 — token rejected: typical causes are clock drift beyond the allowed tolerance, a wrong "
            "signing key "
            "or a token that was already used. The tolerances are listed in the gateway guide."
        ),
        score=0.8,
    )
    guide = evidence("guide#0", "Gateway guide", (
        "Clock drift: the token's validity window is checked with a maximum tolerance of 90 seconds. "
        "Wrong signing key: the token was signed with a key other than the configured one."), score=0.75)
    answer = synthesize_answer(question, LOOKUP, [codes, guide])
    assert "90 seconds" in first_sentence(answer.text), answer.text


def test_two_joined_questions_are_two_asks() -> None:
    assert ask_clauses("We pay $50. How much credit do we get and by when must we claim it?") == [
        "How much credit do we get", "by when must we claim it?"]
    assert ask_clauses("How much credit do we get?") == ["How much credit do we get?"]


def test_the_outcome_of_a_retold_situation_leads_and_the_second_ask_is_answered() -> None:
    question = (
        "Our site was down for 90 minutes last month and we pay $400 a month. How much credit do we get "
        "and by when must we claim it?"
    )
    terms = evidence(
        "terms#0",
        "Service terms",
        (
            "Credits are issued only when you claim them. "
            "A customer paying $400 per month has 90 downtime minutes in a 30-day month. "
            "Uptime is 99.79%, so the credit is 10%, or $40. "
            "A customer paying $1,000 per month with an uptime of 98.5% gets a credit of 25%, or $250."
        ),
        score=0.8,
    )
    claims = evidence("terms#1", "Service terms", (
        "To claim a credit, open a ticket within 30 days after the end of the month in which the downtime "
        "occurred."), score=0.6)
    answer = synthesize_answer(question, HOP, [terms, claims])
    assert "$40" in first_sentence(answer.text), answer.text
    assert "within 30 days" in answer.text
    assert "90 downtime minutes" not in answer.text  # the asker's own situation is not retold


def test_a_price_in_a_named_currency_is_answered_in_that_currency() -> None:
    kind = answer_kind("What does an extra seat cost on Pro in euros?")
    assert (
        kind is not None
        and kind.search("Pro: USD $9; EUR €8.50")
        and not kind.search("Pro costs $9 per seat.")
    )
    question = "What is the price per extra seat on Basic and on Pro in euros?"
    rows = evidence(
        "prices#0",
        "Prices by currency",
        (
            "Extra seat: Basic: USD $4.00; EUR €3.80; GBP £3.20. Extra seat: Pro: USD $9.00; EUR €8.50; GBP "
            "£7.00."
        ),
        score=0.6,
    )
    prose = evidence(
        "seats#0",
        "Seats",
        ("Basic and Pro: extra seats are billed at $4.00 per seat on Basic and $9.00 per seat on Pro."),
        score=0.8,
    )
    answer = synthesize_answer(question, RouteDecision(route=Route.MULTI_PART, reason="t"), [prose, rows])
    assert "€3.80" in first_sentence(answer.text), answer.text


def test_a_sentence_about_another_code_of_the_same_family_does_not_lead() -> None:
    question = "getting GW_7031 on every call from our build agents, where do we fix this?"
    codes = evidence(
        "codes#0",
        "Error codes",
        (
            "GW_7221 — Hook disabled: fix the receiver, then re-enable the hook under Settings → Hooks. "
            "GW_7031 — Address not allowed: calls from an address that is not on the allowlist are rejected."
        ),
        score=0.8,
    )
    allow = evidence("allow#0", "Address allowlist", (
        "Calls from an address that is not on the allowlist are rejected with GW_7031. "
        "Add the addresses of your build agents to the allowlist under Settings → Network."), score=0.7)
    answer = synthesize_answer(question, LOOKUP, [codes, allow])
    assert "GW_7221" not in first_sentence(answer.text), answer.text


def test_the_question_term_few_sentences_hold_decides_between_two_sentences_that_cover_as_much() -> None:
    question = "Who can use the exporter?"
    passages = [evidence(f"use#{i}", "Access", text, score=0.7) for i, text in enumerate([
        "Everyone can use the dashboard.",
        "Members can use the mobile app.",
        "Guests can use shared links.",
        "Owners can use the billing page.",
        "The exporter is for Admins only."])]
    answer = synthesize_answer(question, LOOKUP, passages)
    assert first_sentence(answer.text).startswith("The exporter"), answer.text


def test_the_only_sentence_naming_the_askers_place_counts_though_its_passage_ranks_low() -> None:
    question = "We're a lab and need to store samples data in Oslo. Which tier do we need?"
    generic = [evidence(f"tiers#{i}", "Tiers", text, score=0.6) for i, text in enumerate([
        "Pick the tier you need when you sign up.",
        "Every tier can store data for a lab.",
        "The Basic tier suits a small lab.",
        "You need the Pro tier to store more data.",
        "Tier changes take effect at once.",
        "Data is stored where the tier allows.",
        "Most labs need no more than the Pro tier."])]
    regions = evidence("regions#0", "Regions", "NO-1: Location Oslo, Norway; Tiers that can use it Max only.",
                      grade=Grade.INCORRECT, score=0.3)
    [oslo] = [c for c in _candidates(question, [*generic, regions]) if "Oslo" in c.text]
    assert oslo.weight >= 0.75  # an incorrect passage ranked eighth would weigh 0.35
    assert "Oslo" in synthesize_answer(question, HOP, [*generic, regions]).text


def test_after_a_move_from_one_name_to_another_the_answer_is_about_the_new_one() -> None:
    question = ("We moved our project from NA-2 to SA-1 yesterday and now every call returns GW_4033. "
                "Which URL should we use now?")
    example = evidence(
        "faq#0",
        "API questions",
        ("Use the endpoint of your project's zone, for example https://api.na2.tool.example for NA-2."),
        score=0.8,
    )
    codes = evidence("codes#0", "Error codes", (
        "GW_4033 — Project is in another zone: the call was sent to another zone's endpoint."), score=0.7)
    zones = evidence("zones#0", "Zones", (
        "NA-2: REST API https://api.na2.tool.example. SA-1: REST API https://api.sa1.tool.example."),
        grade=Grade.AMBIGUOUS, score=0.4)
    answer = synthesize_answer(question, HOP, [example, codes, zones])
    first = first_sentence(answer.text)
    assert "api.sa1.tool.example" in first and "na2" not in first, answer.text
