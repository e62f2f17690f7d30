"""scripts/perf_compiled.py reads `perf script` output: frames leaf first, offsets and inlined frames handled,
compiled functions counted innermost and inclusively."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "perf_compiled.py"

# Two samples as `perf script` prints them with --call-graph dwarf: a header line, then one frame per line.
RECORDING = """\
python 1234 10.000001:    2002002 cpu-clock:
\t7f0000001111 unicodekeys_lookup_unicode+0x41 (/usr/lib/libpython3.11.so.1.0)
\t7f0000002222 _Py_dict_lookup+0x10 (inlined)
\t7f0000003333 bounded_lru_cache_wrapper+0x99 (/usr/lib/libpython3.11.so.1.0)
\t7f0000004444 CPyDef_text____words+0xc3 (/x/build/mypyc/sleuth_heuristics__mypyc.cpython-311-x86_64-linux-gnu.so)
\t7f0000005555 CPyDef_grader___score_passages+0xaa1 (/x/build/mypyc/sleuth_heuristics__mypyc.cpython-311-x86_64-linux-gnu.so)

python 1234 10.000501:    2002002 cpu-clock:
\t7f0000006666 sqlite3VdbeExec+0x1 (/usr/lib/libsqlite3.so.0.8.6)
\t7f0000007777 _PyEval_EvalFrameDefault+0x2 (/usr/lib/libpython3.11.so.1.0)
"""


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("perf_compiled", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_frames_are_read_leaf_first_without_offsets() -> None:
    first, second = list(_script().samples(RECORDING))
    assert first[0] == ("unicodekeys_lookup_unicode", "libpython3.11.so.1.0")
    assert first[1] == ("_Py_dict_lookup", "inlined")
    assert first[3][0] == "CPyDef_text____words" and second[0] == ("sqlite3VdbeExec", "libsqlite3.so.0.8.6")


def test_the_report_counts_objects_and_compiled_functions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    recording = tmp_path / "perf.txt"
    recording.write_text(RECORDING, encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["perf_compiled.py", str(recording), "--callers", "unicodekeys_lookup_unicode"])
    _script().main()
    out = capsys.readouterr().out
    assert out.startswith("2 samples")
    assert " 50.0 %  libpython3.11.so.1.0" in out and " 50.0 %  libsqlite3.so.0.8.6" in out
    innermost = out.split("--- innermost")[1].split("---")[0]
    assert "CPyDef_text____words" in innermost and "score_passages" not in innermost
    inclusive = out.split("inclusive")[1].split("---")[0]
    assert " 50.0 %  CPyDef_grader___score_passages" in inclusive
    assert "_Py_dict_lookup <- bounded_lru_cache_wrapper <- CPyDef_text____words" in out
