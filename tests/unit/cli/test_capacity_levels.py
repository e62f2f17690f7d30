"""`sleuth capacity --levels`: the saturation levels an operator asks for, or an error naming the option."""

from __future__ import annotations

import pytest
import typer

from cli.main import _levels


def test_levels_are_read_as_rising_process_counts() -> None:
    assert _levels(None) is None
    assert _levels("1,2,4") == (1, 2, 4)
    assert _levels("16") == (16,)


@pytest.mark.parametrize("text", ["", "1,,2", "two", "2,1", "0,1", "1,1", "-1"])
def test_a_bad_list_names_the_option(text: str) -> None:
    with pytest.raises(typer.BadParameter) as caught:
        _levels(text)
    assert caught.value.param_hint == "--levels"
