"""Compile the heuristics (`investigation.compiled.MODULES`) with mypyc into build/mypyc/.

    .venv/bin/python scripts/compile.py [--optional]

`make install` runs it with `--optional` (a machine without a C compiler or mypyc installs and runs the Python
source, only slower), `make compile` without. The new build replaces the old one only once it is complete,
with a manifest of the exact sources it was built from: `investigation/compiled.py` uses it only while they
are unchanged. One to two minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from investigation import compiled  # after the checkout is on sys.path

GROUP = "sleuth_heuristics"


def build(out: Path) -> None:
    """Compile into `out` (which must not exist yet), with the manifest of the sources compiled."""
    import mypy.version
    from mypyc.build import mypycify
    from setuptools import Distribution

    # before: an edit meanwhile shows
    sources = {module: compiled.digest(module) for module in compiled.MODULES}
    paths = [str(compiled.source_path(m).relative_to(ROOT)) for m in compiled.MODULES]
    with tempfile.TemporaryDirectory(prefix="sleuth-mypyc-") as work:
        here = os.getcwd()
        os.chdir(ROOT)  # mypy reads pyproject.toml's [tool.mypy] and resolves the modules from the checkout
        try:
            extensions = mypycify(paths, opt_level="3", multi_file=True, group_name=GROUP,
                                  target_dir=str(Path(work) / "c"))
            dist = Distribution({"name": "sleuth-heuristics", "ext_modules": extensions,
                                 "cmdclass": {"build_ext": _build_ext_in_parallel()}})
            command = dist.get_command_obj("build_ext")
            command.build_lib = str(out)
            command.build_temp = str(Path(work) / "o")
            command.parallel = os.cpu_count() or 1
            dist.run_command("build_ext")
        finally:
            os.chdir(here)
    suffix = compiled.extension_suffix()
    shared = [p.name[: -len(suffix)] for p in out.glob(f"*{suffix}")]
    if len(shared) != 1:
        raise RuntimeError(f"expected one shared library in {out}, found {shared}")
    manifest: dict[str, object] = {"extension_suffix": suffix, "mypy": mypy.version.__version__,
                                   "shared": shared[0], "sources": sources}
    (out / compiled.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _build_ext_in_parallel() -> type:
    """setuptools' build_ext, compiling an extension's C files on every core: the group's shared library is
    some 30 files, which setuptools compiles one after the other (its `parallel` is across extensions)."""
    from concurrent.futures import ThreadPoolExecutor

    from setuptools.command.build_ext import build_ext

    class ParallelBuildExt(build_ext):  # type: ignore[misc]
        def build_extension(self, ext: Any) -> None:
            compile_some = self.compiler.compile

            def compile_all(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
                if len(sources) < 2:
                    return list(compile_some(sources, *args, **kwargs))
                first = list(compile_some(sources[:1], *args, **kwargs))  # makes the output folders, once
                # each file is a gcc process
                with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                    rest = pool.map(lambda source: compile_some([source], *args, **kwargs), sources[1:])
                    return first + [obj for objects in rest for obj in objects]

            self.compiler.compile = compile_all
            try:
                super().build_extension(ext)
            finally:
                self.compiler.compile = compile_some

    return ParallelBuildExt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optional", action="store_true",
                        help="a failed build is reported and the Python source runs (exit 0)")
    parser.add_argument("--into", type=Path, help=argparse.SUPPRESS)  # the build itself, in a child process
    args = parser.parse_args()
    if args.into is not None:
        build(args.into)
        return 0
    target = compiled.BUILD
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mypyc-", dir=target.parent)) / "mypyc"
    started = time.perf_counter()
    log = target.parent / "mypyc.log"  # mypy's notes and the C compiler's command lines
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run([sys.executable, __file__, "--into", str(staging)], stdout=out,
                              stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        shutil.rmtree(staging.parent, ignore_errors=True)
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        print("compile: the heuristics were not compiled; the Python source runs (same results, slower). "
              f"The end of {log.relative_to(ROOT)}:\n  " + "\n  ".join(tail), file=sys.stderr)
        return 0 if args.optional else 1
    old = target.parent / f".mypyc-old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staging.parent, ignore_errors=True)
    problem = compiled.check(target)
    if problem is not None:
        print(f"compile: the new build is not usable: {problem}", file=sys.stderr)
        return 0 if args.optional else 1
    print(f"compile: {len(compiled.MODULES)} heuristic modules compiled with mypyc into "
          f"{target.relative_to(ROOT)}/ in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
