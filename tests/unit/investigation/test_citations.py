"""Citations are validated against the evidence set: dangling markers are removed with a caveat."""

from __future__ import annotations

import pytest

from investigation.citations import cite, markers_in, validate
from investigation.state import Answer, Citation
from tests.unit.investigation.fakes import evidence

pytestmark = pytest.mark.unit

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
