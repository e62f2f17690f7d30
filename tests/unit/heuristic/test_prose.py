"""Markdown evidence read as plain sentences: tables become row sentences, lists keep their lead-in."""

from __future__ import annotations

from heuristic.prose import units, with_context

SLA = ("## 1. Who is covered\n\n| Plan | Monthly uptime commitment | Maximum service credit | |---|---|---| "
       "| Free | None | None | | Team | 99.5% | 10% of the monthly subscription fee | "
       "| Business | 99.9% | 30% of the monthly subscription fee |\n\nRoughly, 99.5% allows about 3 hours.")
LIMITS = ("| Limit | Free | Team | Business | Enterprise | |---|---|---|---|---| "
          "| Maximum run duration | 5 minutes | 15 minutes | 60 minutes | 6 hours |")


def texts(text: str, question: str = "") -> list[str]:
    return [with_context(u) for u in units(text, question)]


def test_a_table_row_becomes_one_sentence_with_its_column_names() -> None:
    out = texts(SLA)
    assert (
        "Team: Monthly uptime commitment 99.5%; Maximum service credit 10% of the monthly subscription fee."
        in out
    )
    assert not any("|" in t or "#" in t or "---" in t for t in out)
    assert out[-1] == "Roughly, 99.5% allows about 3 hours."


def test_columns_the_question_names_are_the_only_ones_kept() -> None:
    assert texts(LIMITS, "max run duration on Team vs Business?") == [
        "Maximum run duration: Team 15 minutes; Business 60 minutes."]
    assert len(texts(LIMITS, "what are the plan limits?")[0].split(";")) == 4


def test_lists_keep_their_lead_in_and_emphasis_and_code_go() -> None:
    text = ("Run history is kept for: - Free: 7 days - **Team**: 30 days\n\n"
            "```\n{\"a\": 1}\n```\n\n**Can I pay by PayPal?** No. We accept `SEPA` and [cards](https://x).")
    out = units(text)
    assert [u.text for u in out[:2]] == [
        "Run history is kept for: Free: 7 days.",
        "Run history is kept for: Team: 30 days.",
    ]
    assert out[2].text == "No. We accept SEPA and cards." and out[2].section == "Can I pay by PayPal?"
    assert not any("{" in u.text for u in out)


def test_a_heading_naming_a_code_prefixes_its_sentences() -> None:
    out = texts(
        "### ERR_4030 — Organization suspended\n\nThe organization is suspended because an invoice is due."
    )
    assert out == [
        "ERR_4030 — Organization suspended: The organization is suspended because an invoice is due."
    ]


def test_plain_prose_is_its_sentences() -> None:
    prose = "Alu is a demon in Akkadian mythology. It was thought to be a spirit."
    assert texts(prose) == ["Alu is a demon in Akkadian mythology.", "It was thought to be a spirit."]


def test_a_number_under_a_rate_column_reads_as_a_quantity_with_its_unit() -> None:
    table = (
        "| Plan | Requests per minute per workspace | Region | |---|---|---| | Business | 1,200 | EU-1 | "
        "| Team | 300 (raised from 200) | US-1 |"
    )
    out = texts(table)
    assert "Business: 1,200 requests per minute per workspace; Region EU-1." in out
    assert "Team: 300 requests per minute per workspace (raised from 200); Region US-1." in out


def test_a_bare_list_of_names_gets_its_heading_which_says_who_gets_them() -> None:
    text = ("## Basic integrations (every tier)\n\nWebhook call, Matrix, Google Docs, Notion, Jira, Linear, "
            "Airtable and Amazon S3.\n\nThe Zendesk integration requires the Pro tier or higher.")
    out = texts(text)
    assert out[0].startswith("Basic integrations (every tier): Webhook call, Matrix")
    # a sentence speaks for itself
    assert out[1] == "The Zendesk integration requires the Pro tier or higher."


def test_a_short_cell_of_several_sentences_stays_one_sentence_of_its_row() -> None:
    table = ("| Tier | Data move | |---|---| | Basic | Not available. | "
             "| Pro | Available. $300 per project per move, invoiced monthly. |")
    assert "Pro: Available; $300 per project per move, invoiced monthly." in texts(table)


def test_a_passage_without_a_table_is_parsed_once_for_every_question() -> None:
    from heuristic.prose import _parse_units
    from investigation import memo

    prose = "## Retention\n\nRun history is kept for 30 days on Team. **Note.** Logs are kept for 7 days."
    with memo.caching(True):
        memo.clear()
        first = units(prose, "how long is run history kept on Team?")
        assert units(prose, "are logs kept?") == first == _parse_units(prose, "are logs kept?")
        assert memo.stats()["heuristic.prose._units"][1] == 1  # one parse for both questions
    # A table's rows still depend on the question (the columns it names).
    assert units(LIMITS, "max run duration on Team vs Business?") != units(
        LIMITS, "what are the plan limits?"
    )


def test_a_heading_joined_to_a_label_never_prefixes_a_sentence_of_its_own() -> None:
    # Serves any question answered from a labelled item: the heading ("How pots are stored.") must not
    # become the answer's first sentence; the label that names something stays.
    # (Compression writes a kept item back under its heading and label joined: "## How pots are stored.
    # Shelving".)
    text = "## How pots are stored. Shelving\n\nPots are kept for 12 weeks, then recycled."
    assert texts(text) == ["Shelving: Pots are kept for 12 weeks, then recycled."]
    assert texts("## Kiln rules for Studio B\n\n**Glazes.** Firing is capped at 1,200 degrees.") == [
        "Kiln rules for Studio B — Glazes: Firing is capped at 1,200 degrees."]



def test_an_faq_answer_has_its_question_as_context() -> None:
    # A Q/A FAQ ("How long is the free trial?" answered under "Q: Is there a free trial?"): the answer's
    # sentences are about the question they answer, which is their context but never prefixes them.
    faq = ("# Questions\n\nQ: Is there a free trial?\nA: Yes, 14 days on the Pro plan. No card is needed.\n\n"
           "Q: Can I pause?\nA: Only yearly plans pause.")
    got = [(u.text, u.section) for u in units(faq)]
    assert got == [
        ("Q: Is there a free trial?", "Questions"),
        ("A: Yes, 14 days on the Pro plan.", "Questions. Q: Is there a free trial?"),
        ("No card is needed.", "Questions. Q: Is there a free trial?"),
        ("Q: Can I pause?", "Questions"),
        ("A: Only yearly plans pause.", "Questions. Q: Can I pause?"),
    ]
    assert [with_context(u) for u in units(faq)][1] == "A: Yes, 14 days on the Pro plan."
    # A question in running prose, not a Q/A pair, is a sentence like any other.
    assert [u.section for u in units("# Help\n\nWhy pause? Yearly plans pause.")] == ["Help", "Help"]
