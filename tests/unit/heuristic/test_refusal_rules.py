"""Refusal rules on made-up text: the asked action no passage names, words for people or for the kind
of value, a "Yes:" that says what is asked, the asker's people not graded against."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from heuristic import grader
from heuristic.absent import missing_action, missing_role
from heuristic.grader import graded_terms, score_passages
from heuristic.sufficiency import absent_names, has_support, unsupported_names
from heuristic.verdicts import yes_no_prefix
from investigation.state import Evidence, Grade
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence, passage


def vectorise(texts: Sequence[str]) -> np.ndarray:
    return np.asarray(BagOfWordsEmbedder().embed(texts), dtype=np.float32)


LOCKED = evidence("orders#0", "Zorblet orders", "Once paid, an order is locked: it can no longer be edited. "
                  "To change a locked order, contact the help desk before it ships.", score=0.6)
FEES = evidence("fees#0", "Zorblet fees", "Zorblet charges a 2% fee on every order sent abroad.", score=0.5)


@pytest.mark.parametrize(
    ("question", "action"),
    [
        ("Can the help desk rewind my locked order, and what does it cost?", ["rewind"]),
        ("Could an admin rewind the order?", ["rewind"]),
        ("Can I still change my locked order?", []),  # the passages name the action
        ("Can he fix my locked order himself?", []),  # a verb of changing: "change" names it too
        ("Could an admin fix the fee?", []),
        ("Can he refold my locked order himself?", ["refold"]),
        ("Can I get a refund for my order?", []),  # "get" says how it is asked, not what is done
        ("Can you compare the fees of two orders?", []),  # nor does "compare"
        ("How do I change a locked order?", []),  # the passages name the action
        ("How do we hand the locked order over to the help desk?", ["hand"]),  # how to do what none names
        ("How do I get a refund for my order?", []),  # "get" says how it is asked
        ("How long do you keep my order?", []),  # asks a duration, not how an action is done
    ],
)
def test_the_asked_action_is_missing_when_no_passage_names_it(question: str, action: list[str]) -> None:
    assert missing_action(question, [LOCKED, FEES]) == action


def test_an_action_no_passage_names_makes_the_question_unsupported() -> None:
    question = "Can the help desk rewind my locked order, and what does it cost?"
    assert absent_names(question, [LOCKED, FEES]) == ["rewind"]
    assert unsupported_names(question, [LOCKED, FEES]) == ["rewind"]
    assert not has_support(question, [LOCKED, FEES])
    assert has_support("Can the help desk change my locked order?", [LOCKED, FEES])


def test_a_word_for_people_in_general_is_not_what_the_knowledge_base_lacks() -> None:
    countries = evidence("faq#0", "Zorblet FAQ", "Q: Do you support several countries? A: A store sells in "
                         "the country it is registered in. Selling in Norway needs a second store.")
    others = [evidence(f"o{i}#0", f"Zorblet guide {i}", f"Zorblet store setup step {i}.",
                       grade=Grade.AMBIGUOUS) for i in range(4)]
    question = "Can we pay staff in Norway and Chile from one Zorblet store?"
    assert "staff" not in absent_names(question, [countries, *others])
    # a thing the knowledge base does not have stays missing
    assert absent_names("Can I ship live animals with Zorblet?", [countries, *others]) == ["live", "animals"]


@pytest.mark.parametrize(
    ("question", "lead", "prefix"),
    [
        (  # every name, but not what is asked of them: no verdict
            "Can we ship gifts to Norway and Chile from one Zorblet store?",
            "Zorblet files customs forms for every store: in Norway, the EORI form; in Chile, the DIN form.",
            "",
        ),
        (
            "Can a Zorblet store ship gifts to Norway?",
            "Every Zorblet store can ship gifts to Norway.",
            "Yes: ",
        ),
    ],
)
def test_yes_needs_what_is_asked_of_the_names(question: str, lead: str, prefix: str) -> None:
    assert yes_no_prefix(question, lead) == prefix


def test_a_word_for_the_kind_of_value_is_not_missing() -> None:
    trial = evidence("faq#1", "Zorblet FAQ", "Q: Is there a free trial? A: Yes, 30 days on every plan.")
    assert absent_names("Is there a trial period?", [trial, LOCKED]) == []


def test_the_askers_people_in_general_are_not_graded_against(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(graded_terms("Can our team use hardware keys?")) == {"use", "hardware", "keys"}
    assert "team" in graded_terms("What does the Team plan cost?")  # a name stays
    keys = passage("2fa#0", "Two-step sign-in", "Owners can require hardware keys for every user.")
    with_rule = score_passages("Can our team use hardware keys?", [keys], {}, vectorise)[0]
    monkeypatch.setattr(grader, "_PEOPLE_WORDS", re.compile(r"(?!x)x(?P<a>)?"))
    assert with_rule > score_passages("Can our team use hardware keys?", [keys], {}, vectorise)[0]
    assert absent_names("Can people return items themselves?", [
        evidence("ret#0", "Returns", "The portal lets your customers start a return themselves.")]) == []


def test_the_askers_people_as_subject_ask_as_the_asker_would() -> None:
    sign_in = evidence("mfa#0", "Two-step sign-in", "Members sign in with a password and an authenticator.")
    others = [evidence(f"o{i}#0", f"Zorblet guide {i}", f"Zorblet setup step {i}.", grade=Grade.AMBIGUOUS)
              for i in range(3)]
    assert absent_names("Can people sign in with a fingerprint?", [sign_in, *others]) == ["fingerprint"]
    assert absent_names("Can our team sign in with an authenticator?", [sign_in, *others]) == []


FOUNDER = evidence("story#0", "About Zorblet",
                   "Zorblet was founded in 2019 by Ada Brix, its chief executive.", score=0.6)


@pytest.mark.parametrize(
    ("question", "passages", "missing"),
    [
        ("Who is the CEO of Zorblet?", [LOCKED, FEES], ["ceo"]),
        ("Who founded Zorblet?", [LOCKED, FEES], ["founded"]),
        ("Who founded Zorblet?", [LOCKED, FEES, FOUNDER], []),  # a passage names the deed
        ("Who is the chief executive of Zorblet?", [LOCKED, FOUNDER], []),
        # a name most passages do not mention is not the knowledge base's company: a world question, whose
        # passages may say it in other words ("married" for "spouse")
        ("Who is the spouse of Brix?", [LOCKED, FEES, FOUNDER], []),
    ],
)
def test_a_role_or_deed_of_the_kbs_company_no_passage_names_is_missing(
        question: str, passages: list[Evidence], missing: list[str]) -> None:
    assert missing_role(question, passages) == missing


def test_a_missing_role_makes_the_question_unsupported() -> None:
    assert not has_support("Who is the CEO of Zorblet?", [LOCKED, FEES])


def test_a_counted_thing_no_passage_names_makes_a_count_question_unsupported() -> None:
    assert not has_support("How many vacation days does Zorblet give its staff?", [LOCKED, FEES, FOUNDER])
    assert has_support("How many orders does Zorblet lock once paid?", [LOCKED, FEES, FOUNDER])


@pytest.mark.parametrize(
    ("question", "supported"),
    [
        # What is asked of the provider ("what <thing> does Zorblet …", "how long does Zorblet keep <thing>")
        # must be named by some passage: a thing next to it does not answer.
        ("What uptime percentage does Zorblet commit to for orders?", False),
        ("For an audit, how long does Zorblet keep the login histories of our staff?", False),
        ("Which fee does Zorblet charge on orders sent abroad?", True),
        ("How long does Zorblet keep a locked order?", True),
        ("What time do I need to pay the order by?", True),  # the asker, not the provider: not this shape
    ],
)
def test_an_attribute_asked_of_the_provider_no_passage_names_makes_the_question_unsupported(
        question: str, supported: bool) -> None:
    assert has_support(question, [LOCKED, FEES, FOUNDER]) is supported


@pytest.mark.parametrize(
    ("question", "supported"),
    [
        # An ability granted by a feature ("does X let my customers <do> <thing>?"): the thing acted on
        # must be named by some passage.
        ("Does the Zorblet portal let my customers trade in a voucher instead of a refund?", False),
        ("Will Zorblet allow us to change a locked order?", True),
    ],
)
def test_an_ability_a_feature_would_grant_is_unsupported_when_no_passage_names_its_object(
        question: str, supported: bool) -> None:
    assert has_support(question, [LOCKED, FEES, FOUNDER]) is supported


def test_a_priced_action_is_unsupported_when_no_passage_names_what_it_acts_on() -> None:
    # "How much does it cost to <do> <thing>?": the thing must be named by some passage.
    assert not has_support("How much does it cost to add gift wrapping to an order?", [LOCKED, FEES, FOUNDER])
    assert has_support("How much does it cost to send an order abroad?", [LOCKED, FEES, FOUNDER])
