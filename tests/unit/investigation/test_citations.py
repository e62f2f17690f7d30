"""Citations are validated against the evidence set: dangling markers are removed with a caveat."""

from __future__ import annotations

from investigation.citations import cite, markers_in, validate
from investigation.state import Answer, Audience, Citation, RetrievalScope, Visibility
from tests.unit.investigation.fakes import evidence

EVIDENCE = [evidence("a#0", "A", "Alpha."), evidence("b#0", "B", "Beta.")]


def test_valid_markers_are_kept() -> None:
    answer = Answer(text="Alpha [1]. Beta [2].", citations=cite(EVIDENCE))
    checked = validate(answer, EVIDENCE)
    assert checked.text == "Alpha [1]. Beta [2]." and checked.caveat is None
    assert [c.evidence_id for c in checked.citations] == ["ev_a#0", "ev_b#0"]


def test_a_dangling_marker_is_removed_and_a_caveat_set() -> None:
    answer = Answer(text="Alpha [1]. Gamma [3].", citations=cite(EVIDENCE))
    checked = validate(answer, EVIDENCE)
    assert checked.text == "Alpha [1]. Gamma."
    assert markers_in(checked.text) == [1]
    assert checked.caveat is not None and "[3]" in checked.caveat
    assert [c.marker for c in checked.citations] == [1]  # [2] was never used in the text


def test_a_citation_to_evidence_outside_the_set_is_dangling_and_markers_are_renumbered() -> None:
    bogus = Citation(marker=1, evidence_id="ev_elsewhere", source_id="x", title="X")
    good = Citation(marker=2, evidence_id="ev_b#0", source_id="b", title="B")
    checked = validate(Answer(text="X [1]. Beta [2].", citations=(bogus, good)), EVIDENCE)
    assert checked.text == "X. Beta [1]."
    assert [(c.marker, c.evidence_id) for c in checked.citations] == [(1, "ev_b#0")]
    assert checked.caveat and "[1]" in checked.caveat


def test_citations_of_internal_evidence_are_marked_and_a_customer_answer_loses_their_sentences() -> None:
    public = evidence("sla#0", "SLA", "Claims are due within 30 days.")
    runbook = evidence("rb#0", "Runbook", "Approve up to $500.", visibility=Visibility.INTERNAL)
    answer = Answer(text="Claims are due within 30 days [1]. Agents approve up to $500 [2].", citations=cite(
        [public, runbook]))
    for_agent = validate(answer, [public, runbook], RetrievalScope.of(Audience.AGENT))
    assert [c.internal for c in for_agent.citations] == [False, True] and "$500" in for_agent.text
    for_customer = validate(answer, [public, runbook], RetrievalScope.of(Audience.CUSTOMER))
    assert for_customer.text == "Claims are due within 30 days [1]."
    assert [c.source_id for c in for_customer.citations] == ["sla"] and "internal" in (
        for_customer.caveat or ""
    )


def test_a_retrieval_scope_per_audience() -> None:
    customer = RetrievalScope.of("customer", ["org:7"])
    assert customer.acl == ("org:7",) and customer.visibility == (Visibility.PUBLIC,)
    assert RetrievalScope.of("customer").acl == ()  # no principals: ACL-free documents only
    agent = RetrievalScope.of("agent")
    assert agent.acl is None and agent.visibility is None and agent.cache_terms() is None
    assert customer.cache_terms() != RetrievalScope.of("agent", ["org:7"]).cache_terms()
    assert RetrievalScope.of("customer").cache_terms() != RetrievalScope.of("agent").cache_terms()
