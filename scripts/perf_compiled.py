"""Where the compiled heuristics spend their time, from a Linux `perf` recording: py-spy and cProfile see a
mypyc-compiled function as one opaque call (or not at all), `perf` sees its C. A benchmark command, not a test.

    perf record -F 499 --call-graph dwarf,8192 -o /tmp/perf.data -- \\
        .venv/bin/sleuth bench examples/bench/hotpotqa --mode agentic --k 10 --executor inline --out /tmp/x.jsonl
    perf script -i /tmp/perf.data > /tmp/perf.txt
    .venv/bin/python scripts/perf_compiled.py /tmp/perf.txt [--top 25] [--callers SYMBOL]

Prints, over all samples of the recording (the whole process: the model runs and the retrieval threads too):
the share of each shared object that a sample's innermost frame is in (libpython, onnxruntime, SQLite, the
kernel, the compiled heuristics' own library…), then for the samples taken inside a compiled function the innermost
one (`CPyDef_<module>___<function>`: the time of that function, C callees such as dict, set and `re` work
included) and each compiled function inclusively. `--callers SYMBOL` lists the call paths of samples whose
leaf is SYMBOL (e.g. `unicodekeys_lookup_unicode`: who looks strings up in dicts).
"""

from __future__ import annotations

import argparse
import collections
import re
from collections.abc import Iterator
from pathlib import Path

_ADDRESS = re.compile(r"^[0-9a-f]+\s+")
_OFFSET = re.compile(r"\+0x[0-9a-f]+$")
_OBJECT = re.compile(r"\(([^()]*)\)\s*$")


def samples(text: str) -> Iterator[list[tuple[str, str]]]:
    """Each sample's frames, leaf first, as (symbol without offset, shared object's file name)."""
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()[1:]  # the first line is the sample's header
        frames = []
        for line in lines:
            line = _ADDRESS.sub("", line.strip())
            found = _OBJECT.search(line)
            where = Path(found.group(1)).name if found else "?"
            symbol = _OFFSET.sub("", line[: found.start()].strip() if found else line)
            frames.append((symbol, where))
        if frames:
            yield frames


def compiled_name(symbol: str) -> str | None:
    return symbol if symbol.startswith(("CPyDef_", "CPyPy_")) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path, help="the output of `perf script`")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--callers", help="list the call paths of samples whose leaf is this symbol")
    args = parser.parse_args()
    total = 0
    objects: collections.Counter[str] = collections.Counter()
    innermost: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    paths: collections.Counter[str] = collections.Counter()
    for frames in samples(args.script.read_text(encoding="utf-8", errors="replace")):
        total += 1
        objects[next((where for _, where in frames if where != "inlined"), "?")] += 1
        names = [name for symbol, _ in frames if (name := compiled_name(symbol))]
        if names:
            innermost[names[0]] += 1
            for name in set(names):
                inclusive[name] += 1
        if args.callers and frames[0][0] == args.callers:
            paths[" <- ".join(symbol for symbol, _ in frames[1:6])] += 1
    if not total:
        raise SystemExit(f"no samples in {args.script}")

    def show(title: str, counts: collections.Counter[str]) -> None:
        print(f"--- {title}")
        for name, count in counts.most_common(args.top):
            print(f"{100 * count / total:5.1f} %  {name}")

    print(f"{total} samples")
    show("shared object of the leaf frame", objects)
    show("innermost compiled function (its C callees included)", innermost)
    show("compiled functions, inclusive", inclusive)
    if args.callers:
        show(f"callers of {args.callers}", paths)


if __name__ == "__main__":
    main()
