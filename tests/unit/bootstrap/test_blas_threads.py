"""Every process that builds `Services` runs numpy's BLAS on one thread
(bootstrap.services.limit_blas_threads): OpenBLAS's spinning threads doubled an investigation's CPU for no
time gained (docs/performance.md).
Each case runs in a fresh interpreter: the limit is process-wide."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bootstrap.services import BLAS_THREAD_VARIABLES
from tests.support.fresh import run_script

PROBE = """
import json, os, sys
import numpy
from threadpoolctl import threadpool_info

def blas():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

before = blas()
from bootstrap.services import Services
from config.settings import Settings
Services(Settings(home=sys.argv[1]))
after = blas()
pid = os.fork()
if pid == 0:  # a Celery prefork child keeps its parent's setting
    with open(sys.argv[2], "w") as out:
        json.dump(blas(), out)
    os._exit(0)
os.waitpid(pid, 0)
print(json.dumps({"before": before, "after": after, "child": json.load(open(sys.argv[2]))}))
"""


def _probe(tmp_path: Path, **env: str) -> dict[str, list[int]]:
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    out = run_script(PROBE, str(tmp_path / "home"), str(tmp_path / "child.json"), env={**clean, **env})
    found: dict[str, list[int]] = json.loads(out.strip().splitlines()[-1])
    return found


def test_services_put_blas_on_one_thread_in_the_process_and_its_forked_children(tmp_path: Path) -> None:
    found = _probe(tmp_path)
    assert found["before"], "numpy's BLAS library was not found by threadpoolctl"
    if (os.cpu_count() or 1) >= 2:  # the default is one thread per core: the limit is what changed it
        assert max(found["before"]) > 1
    assert found["after"] == [1] * len(found["after"])
    assert found["child"] == found["after"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores to tell an operator's count from 1")
def test_an_operator_s_thread_count_is_kept(tmp_path: Path) -> None:
    found = _probe(tmp_path, OPENBLAS_NUM_THREADS="2")
    assert found["after"] == found["before"] == [2] * len(found["before"])
