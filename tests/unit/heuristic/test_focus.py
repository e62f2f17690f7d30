"""A question's specific names, and whether the evidence mentions them (refusal in a one-product KB)."""

from __future__ import annotations

import random

import pytest

from heuristic.focus import _near, _near_in, _within, focus_names, missing_names, missing_terms
from heuristic.planner import probe_queries
from heuristic.sufficiency import has_support, judge_evidence, unsupported_names
from heuristic.vocabulary import Vocabulary
from investigation.state import Grade, Plan, QueryKind
from tests.unit.investigation.fakes import evidence

KB = [evidence("deploy#0", "Getting started", "Acme Cloud runs in US-1 and EU-1 (Frankfurt). Support answers "
               "Severity 1 tickets within 1 hour; we integrate with Microsoft Entra ID and the Team plan.",
               grade=Grade.AMBIGUOUS, score=0.48)]


def test_focus_names_are_specific_names_not_sentence_openers() -> None:
    assert focus_names("Security wants a 15 minute idle timeout. We're on Team - what plan?") == ["Team"]
    assert focus_names("Does your API support GraphQL queries?") == ["GraphQL"]
    assert focus_names("Is there an iOS or Android app?") == ["Android", "iOS"]
    assert focus_names("what does ERR_4033 mean") == ["ERR_4033"]


def test_a_number_and_its_unit_written_as_one_word_is_a_measure_not_a_name() -> None:
    # a passage writes "rounded to the nearest 5 minutes", "a trial of 14 days": no name is missing
    assert focus_names("I switched off the 5-minute rounding for our Texas site") == ["Texas"]
    assert focus_names("Is the 14-day trial or the 1.5-hour window longer?") == []
    assert focus_names("Does COVID-19 or ERR-4021 or the Team-2 plan apply?") == ["COVID-19", "ERR-4021",
                                                                                "Team-2"]


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        (
            "Do you provide a Kubernetes operator or Helm chart for running Acme Cloud on-premise?",
            ["Kubernetes", "Helm"],
        ),
        ("Can we get notifications in Microsoft Teams instead of Slack?", ["Microsoft Teams", "Slack"]),
        ("What is the Sev 1 response time?", []),  # "Sev 1" abbreviates "Severity 1"
        ("Is Frankfurt in the EU-1 region?", []),
        ("Which region is Franfkurt in?", []),  # a misspelling of a word the evidence has
    ],
)
def test_missing_names(question: str, missing: list[str]) -> None:
    assert missing_names(question, KB) == missing


def test_an_unmentioned_name_is_probed_once_then_refused() -> None:
    question = "Does your API support GraphQL queries?"
    plan = Plan(original=question, subqueries=())
    judgment = judge_evidence(question, plan, KB)
    assert "absent: GraphQL" in judgment.missing_information and not judgment.sufficient
    assert judgment.absent == ("GraphQL",)
    probes = probe_queries(question, judgment.absent, [question])
    assert [p.text for p in probes] == ["GraphQL"] and probes[0].kind is QueryKind.PROBE
    assert probe_queries(question, judgment.absent, [question, "GraphQL"]) == []
    assert not has_support(question, KB)
    assert has_support("Is Frankfurt in the EU-1 region?", KB)


def test_one_odd_name_is_forgiven_when_the_rest_is_found_in_correct_evidence() -> None:
    question = "Did Amy Johnson feature in the Brittishh biopic They Flew Alone?"
    found = [
        evidence(
            "a#0",
            "Amy Johnson",
            "Amy Johnson was an aviator. They Flew Alone is a film about her.",
            score=0.8,
            hop=2,
        )
    ]
    assert missing_names(question, found) == ["Brittishh"]
    assert has_support(question, found)


# -- the asked-about thing in its own lowercase words: a name found elsewhere in the question does not vouch
# for a feature no passage mentions.

SHOP = [
    evidence(
        "apps#0",
        "Integrations",
        "Acme Cloud has a Slack app and a Zendesk app for Windows and Mac browsers.",
        score=0.62,
        hop=2,
    ),
    evidence(
        "plans#0",
        "Plans and pricing",
        "Acme Cloud Team costs $20 per seat; Business costs $45 per seat.",
        score=0.64,
        hop=2,
    ),
    evidence(
        "refunds#0",
        "Refund policy",
        "Annual plans have a 14-day money-back guarantee on an approved refund.",
        score=0.6,
        hop=2,
    ),
    evidence(
        "claims#0",
        "Filing a claim",
        "File a claim within 60 days; approved claims are paid in 5 days.",
        score=0.6,
        hop=2,
    ),
]


@pytest.mark.parametrize(("question", "terms"), [
    ("Is there an Acme Cloud desktop app for Windows?", ["desktop"]),  # "Windows" is found, the app is not
    ("What is the price of the Acme Cloud on-premise appliance?", ["on-premise", "appliance"]),
    ("Do you offer freight shipping quotes?", ["freight", "shipping", "quotes"]),
    ("My claim was rejected, can I dispute it?", ["dispute"]),  # the action is what is asked about
    ("Can Acme Cloud print packing slips with our logo?", ["packing", "slips", "logo"]),
    ("What is Acme's stock ticker?", ["stock", "ticker"]),  # an attribute asked of a name
    ("Do you give nonprofit organizations a discount?", ["nonprofit", "organizations", "discount"]),
    ("How does an agency become an authorized Acme reseller?", ["authorized", "reseller"]),  # a status
    ("Is Saturday delivery available on Team?", ["saturday", "delivery"]),  # whose availability is asked
    ("Where can I download the Acme Cloud mobile app?", ["mobile"]),  # the thing to be had
    ("Is it allowed to file claims for lithium batteries?", ["lithium", "batteries"]),  # an ability
    ("Can new hires e-sign their offer letters?", ["offer", "letters"]),  # the asker's people act
    ("Does Acme Cloud run background checks on new seats?", ["background", "checks"]),  # the provider acts
])
def test_an_unmentioned_asked_thing_is_refused_with_its_words(question: str, terms: list[str]) -> None:
    assert missing_terms(question, SHOP) == terms
    assert unsupported_names(question, SHOP) == terms
    assert not has_support(question, SHOP)


@pytest.mark.parametrize("question", [
    "Is there a Slack app for Acme Cloud?",
    "Is there a money back guarantee?",  # the parts of a hyphenated word count
    "How long do I have to file a claim?",  # "do I have to" is not "do you have"
    "Our claim failed. How long do we have before our data gets deleted?",  # the asker's own time, no offer
    "What is the price of the Business plan?",
    "Can we file a claim for an approved refund?",  # the object's words are there
    "What's Acme's refund guarantee for annual plans?",  # the attribute ends at its preposition
    "Do you give a refund on annual plans?",
    "Is the Slack app available for Mac?",
    "Does Acme Cloud approve claims within 60 days?",  # the provider acts on what the passages name
    "Do you refund approved claims for annual plans, or only the seats?",  # more than half named
])
def test_a_mentioned_asked_thing_is_answered(question: str) -> None:
    assert missing_terms(question, SHOP) == []
    assert has_support(question, SHOP)


def test_an_unmentioned_asked_thing_is_probed_first() -> None:
    question = "Is there an Acme Cloud desktop app?"
    hop_one = [e.model_copy(update={"hop": 1}) for e in SHOP]
    judgment = judge_evidence(question, Plan(original=question, subqueries=()), hop_one)
    assert judgment.absent == ("desktop",) and not judgment.sufficient
    assert [p.text for p in probe_queries(question, judgment.absent, [question])] == ["desktop"]


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_within_is_the_levenshtein_distance_bound() -> None:
    rng = random.Random(7)
    words = [
        "british",
        "brittish",
        "gotha",
        "gothais",
        "severity",
        "sev",
        "abcdef",
        "abdcef",
        "kitten",
        "sitting",
        "flaw",
        "lawn",
        "",
        "a",
        "ab",
        "ba",
        "aaaa",
        "aaab",
    ]
    for _ in range(3000):  # short words over a small alphabet: many near misses of every kind
        words.append("".join(rng.choice("abcd") for _ in range(rng.randint(0, 9))))
    pairs = [(a, b) for a in words[:60] for b in words[:60]] + list(
        zip(words[::2], words[1::2], strict=False)
    )
    for a, b in pairs:
        distance = _levenshtein(a, b)
        for limit in (0, 1, 2, 3):
            assert _within(a, b, limit) is (distance <= limit), (a, b, limit, distance)


def test_a_several_passage_vocabulary_answers_near_spellings_through_its_parts_as_over_their_union() -> None:
    """`_near` on a joined vocabulary asks each passage's own (`Vocabulary.parts`, answers kept per passage):
    the same answer as a scan of the union (`_near_in`, what runs with the text caches off)."""
    rng = random.Random(11)

    def word(low: int, high: int) -> str:
        return "".join(rng.choice("abcde") for _ in range(rng.randint(low, high)))

    for _ in range(300):
        texts = [{word(1, 10) for _ in range(rng.randint(0, 25))} | {f"{word(1, 3)}{rng.randint(0, 99)}"}
                 for _ in range(rng.randint(2, 4))]
        parts = tuple(Vocabulary(t) for t in texts)
        union = Vocabulary(set().union(*texts), parts)
        for asked in [word(5, 11) for _ in range(20)] + [w + word(0, 3) for w in list(texts[0])[:5]]:
            searched = len(asked) >= 5 and asked.isalpha()  # what `_near` looks for at all
            expected = searched and _near_in(asked, set().union(*texts))
            assert _near(asked, union) is expected, (asked, texts)
            assert _near(asked, union) is expected  # the kept answer
            assert _near(asked, parts[0]) is (searched and _near_in(asked, texts[0]))


def test_ordinary_words_are_not_missing_names_when_a_tool_record_answers() -> None:
    from heuristic.sufficiency import absent_names

    record = evidence("tool:order_lookup:cd34", "Order BC-1042, fetched 08:00",
                      "Order BC-1042 is shipped; estimated delivery 2026-12-08.")
    article = evidence(
        "cancel#0",
        "Cancelling an order",
        "An order can be cancelled free of charge while it is processing.",
        grade=Grade.INCORRECT,
        score=0.39,
    )
    others = [evidence(f"a{i}#0", f"Orders {i}", f"An order {w} in 3-5 business days.", grade=Grade.INCORRECT,
                       score=0.2) for i, w in enumerate(["ships", "arrives", "returns", "moves"])]
    question = "Can I cancel order BC-1042 or is it too late?"
    shipped_elsewhere = evidence("notes#0", "Order BC-1042", "Order BC-1042 ships with UPS.")
    assert absent_names(question, [shipped_elsewhere, article, *others]) == ["late"]  # documents alone
    assert absent_names(question, [record, article, *others]) == []  # the asker's own words about the record


def test_a_name_is_not_a_misspelling_of_two_words_in_a_row() -> None:
    # The vocabulary keeps joined pairs for names written closed up ("Sev1" for "Sev 1"); a misspelling is of
    # one word: "Android" is within two edits of "and old" joined, and no passage mentions it.
    found = [evidence("slack#0", "Slack app", "The app was reinstalled and old approval messages refer to "
                      "the previous install; approve new ones from the Slack app.", score=0.6, hop=2)]
    question = "Does the Slack app have an Android version for approvals?"
    assert missing_names(question, found) == ["Android"]
    assert missing_names("Do old Aprovals refer to the install?", found) == []  # a misspelt word is found
    sev = [evidence("sev#0", "Severity", "A sev 1 incident is answered in an hour.")]
    assert missing_names("Is there a Sev1 approval?", sev) == []  # a name written closed up still is
