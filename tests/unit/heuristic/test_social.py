"""Social messages (greetings, thanks, apologies, sign-offs, "are you a bot?") are told from requests."""

from __future__ import annotations

import pytest

from heuristic.router import route_question
from heuristic.social import is_social
from investigation.state import Route


@pytest.mark.parametrize(
    "text",
    [
        "Hi there, thanks for the help yesterday!",
        "Thanks so much, that fixed it!!",
        "Good morning team :)",
        "ok great, you can close this ticket",
        "is this a bot or a real person?",
        "thx!",
        "Have a nice weekend guys",
        "Sorry for the late reply, I was on holiday last week.",
        "Perfect, appreciate the quick turnaround",
        "hey, anyone there?",
        "Cheers, that worked",
        "Many thanks for the quick fix on ERR_4030 yesterday",
        ":)",
        # a sign-off or a question about the assistant in other words than the usual phrase
        "enjoy your weekend everyone",
        "Enjoy the rest of your day!",
        "Is this a real human or an automated bot?",
    ],
)
def test_social_messages_are_direct_without_retrieval(text: str) -> None:
    assert is_social(text)
    assert route_question(text).route is Route.DIRECT


@pytest.mark.parametrize("text", [
    "Hello, who directed Jaws?", "Thanks! One more thing: how do I rotate an API key?",
    "thanks, but the export link still fails", "Hi, what is the SLA on Team?",
    "Sorry, where do I add our VAT number?", "We bought Team last week and it's not working out for us.",
    "Is this a real human or an automated bot? Also how do I export payroll?",
    "Can staff enjoy a holiday bonus on the Team plan?",
    "How many Publix stores are in the state where Hello Love's performer died?",
])
def test_a_request_or_a_problem_report_is_not_social(text: str) -> None:
    assert not is_social(text)
    assert route_question(text).route is not Route.DIRECT
