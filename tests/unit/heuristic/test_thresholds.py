"""Yes/no questions stating the asker's amount or time: the limit of the same kind on what is asked decides
the answer and leads; its yes/no verdict only when the asker's value is inside the limit. Made-up text."""

from __future__ import annotations

from heuristic.pick_scoring import candidate_sentences
from heuristic.synthesis import synthesize_answer
from heuristic.thresholds import deciding_limit, verdict_prefix
from investigation.state import Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
HARBOUR = [
    evidence("swap#0", "Berth swaps",
             "A harbour master may grant a skipper a berth swap alone, once per season, when fees are due. "
             "A swap is limited to $800 of fees per berth; anything larger needs the board's approval. "
             "Skippers who joined less than 10 days ago are never granted a swap."),
    evidence("refunds#0", "Refunds",
             "Mooring passes can be cancelled at any time and the current week is kept. "
             "Season passes are not refunded after the first 20 days. "
             "A skipper who sells the boat may get a refund of a season pass at any time, with proof."),
]


def test_the_limit_the_asked_amount_crosses_leads_without_a_verdict() -> None:
    question = "A skipper's swap of $1,200 failed. Can the harbour master grant the berth swap alone?"
    answer = synthesize_answer(question, LOOKUP, HARBOUR)
    assert answer.text.startswith("A swap is limited to $800 of fees per berth")


def test_the_limit_the_asked_time_falls_inside_of_leads_with_its_verdict() -> None:
    answer = synthesize_answer("Can I get a refund on my season pass after two months?", LOOKUP, HARBOUR)
    assert answer.text.startswith("No: Season passes are not refunded after the first 20 days")


def test_no_verdict_from_a_limit_the_asked_value_is_outside_of() -> None:
    lead = "Season passes are not refunded after the first 20 days."
    assert verdict_prefix("Can I get a refund on my season pass after 5 days?", lead) == ""
    assert verdict_prefix("Can I get a refund on my season pass after 5 weeks?", lead) == "No: "


def test_a_time_said_relatively_is_the_askers_value() -> None:
    # "joined last week" is an age of one week: the limit on ages decides.
    question = "A skipper joined last week. Can she get a berth swap?"
    deciding = deciding_limit(question, candidate_sentences(question, HARBOUR))
    assert deciding is not None
    assert deciding.text.startswith("Skippers who joined less than 10 days ago are never granted a swap")
    assert deciding_limit("Can she get a berth swap?", candidate_sentences(question, HARBOUR)) is None


def test_how_long_something_lasts_is_a_limit_on_it() -> None:
    # "Tide tables can be downloaded for 60 days after purchase": asked after four months, no "Yes" (the
    # limit speaks); after a fortnight, "Yes".
    tables = [evidence("tides#0", "Tide tables",
                       "Tide tables for every berth are combined into one PDF per month. "
                       "Tide tables can be downloaded for 60 days after purchase; then only the receipt "
                       "remains.")]
    late = synthesize_answer("I bought a tide table four months ago. Can I still download the tide table?",
                             LOOKUP, tables)
    assert late.text.startswith("Tide tables can be downloaded for 60 days"), late.text
    early = synthesize_answer("I bought a tide table two weeks ago. Can I still download the tide table?",
                              LOOKUP, tables)
    assert early.text.startswith("Yes: Tide tables can be downloaded for 60 days"), early.text
