"""Settings read from the environment: an empty variable on a setting that is off by default leaves it off."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import Settings


def test_an_empty_variable_leaves_an_optional_setting_unset(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    monkeypatch.setenv("SLEUTH_HOME", str(tmp_path))
    monkeypatch.setenv("SLEUTH_EMBEDDINGS_DIR", "")  # e.g. `SLEUTH_EMBEDDINGS_DIR=$UNSET_VARIABLE`
    settings = Settings()
    assert settings.engines.embeddings_dir is None
    assert settings.effective_embeddings_dir == tmp_path / "embeddings"  # never the working folder


def test_a_set_variable_is_taken_and_an_empty_one_on_a_defaulted_setting_is_still_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLEUTH_EMBEDDINGS_DIR", str(tmp_path / "vectors"))
    assert Settings().engines.embeddings_dir == tmp_path / "vectors"
    monkeypatch.setenv("SLEUTH_MAX_HOPS", "")  # has a default: an empty value is a mistake, named
    with pytest.raises(ValueError, match="max_hops"):
        Settings()
