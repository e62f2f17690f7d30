"""The compiled heuristics against their Python source on inputs no bench asks: the reasoner calls of a bench
(captured by scripts/heuristic_replay.py), each replayed with mutated questions and evidence, on both.

    .venv/bin/python scripts/heuristic_replay.py capture /tmp/calls.pkl examples --decisions
    SLEUTH_COMPILED=false PYTHONHASHSEED=0 .venv/bin/python scripts/compiled_fuzz.py run /tmp/calls.pkl /tmp/source.pkl
    PYTHONHASHSEED=0 .venv/bin/python scripts/compiled_fuzz.py run /tmp/calls.pkl /tmp/compiled.pkl
    .venv/bin/python scripts/compiled_fuzz.py compare /tmp/source.pkl /tmp/compiled.pkl

mypyc checks declared types at run time where Python does not (a value that is not what its annotation says
raises TypeError), so a path no test or bench takes could fail compiled and not as source: this looks for
such paths, and for any other difference, with `--variants` mutations of every call (words dropped,
swapped, re-cased, doubled; digits, codes, quotes, accents, punctuation and empty text put in; evidence
texts cut, emptied or swapped between passages). `run` records each call's result (its repr) or its
exception; `compare` prints the calls, the differing results and each side's exceptions. A benchmark-style
command (docs/performance.md, seventeenth pass), not a test.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

METHODS = ("grade", "judge", "select", "next_queries", "synthesize")
INSERTS = ("2019", "ERR_4031", "EU-1", '"Quoted Title"', "Zürich", "café", "v2.3.1", "100%", "$5", "?", "—",
           "and", "or", "not", "which", "who", "when", "(", ")", ":", "ﬁle", "İstanbul", "x" * 40, "")


def _mutate_text(text: str, rng: random.Random) -> str:
    words = text.split()
    kind = rng.randrange(9)
    if kind == 0 and words:
        del words[rng.randrange(len(words))]
    elif kind == 1 and len(words) > 1:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    elif kind == 2:
        return text.upper() if rng.random() < 0.5 else text.lower()
    elif kind == 3 and words:
        i = rng.randrange(len(words))
        words.insert(i, words[i])
    elif kind == 4:
        words.insert(rng.randrange(len(words) + 1), rng.choice(INSERTS))
    elif kind == 5:
        return text[: rng.randrange(len(text) + 1)]
    elif kind == 6:
        return ""
    elif kind == 7:
        return text.replace(" ", rng.choice(["  ", "\n", " , ", "-"]))
    else:
        return " ".join(w.title() for w in words)
    return " ".join(words)


def _mutate_evidence(items: list[Any], rng: random.Random) -> list[Any]:
    if not items:
        return items
    out = list(items)
    kind = rng.randrange(4)
    i = rng.randrange(len(out))
    if kind == 0:
        out[i] = _with_text(out[i], _mutate_text(_text_of(out[i]), rng))
    elif kind == 1 and len(out) > 1:
        j = rng.randrange(len(out))
        out[i], out[j] = _with_text(out[i], _text_of(out[j])), _with_text(out[j], _text_of(out[i]))
    elif kind == 2:
        del out[i]
    else:
        out = [_with_text(e, _mutate_text(_text_of(e), rng)) for e in out]
    return out


def _text_of(item: Any) -> str:
    passage = getattr(item, "passage", None)
    return str(getattr(passage if passage is not None else item, "text", ""))


def _with_text(item: Any, text: str) -> Any:
    passage = getattr(item, "passage", None)
    if passage is not None and hasattr(passage, "model_copy"):
        return item.model_copy(update={"passage": passage.model_copy(update={"text": text})})
    if hasattr(item, "model_copy") and hasattr(item, "text"):
        return item.model_copy(update={"text": text})
    return item


def _variant(args: tuple[Any, ...], kwargs: dict[str, Any], rng: random.Random) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = list(args), dict(kwargs)
    if rng.random() < 0.7:
        if "question" in kwargs:
            kwargs["question"] = _mutate_text(str(kwargs["question"]), rng)
        elif args and isinstance(args[0], str):
            args[0] = _mutate_text(args[0], rng)
    for seq in (args, kwargs):
        keys = range(len(seq)) if isinstance(seq, list) else list(seq)
        for key in keys:
            value = seq[key]  # type: ignore[index]
            if isinstance(value, (list, tuple)) and value and hasattr(value[0], "model_copy") and rng.random() < 0.6:
                seq[key] = type(value)(_mutate_evidence(list(value), rng))  # type: ignore[index]
    return tuple(args), kwargs


def _run(calls_file: Path, out: Path, variants: int, seed: int) -> None:
    # scripts/ is on sys.path when this file is run as a script
    from heuristic_replay import stand_in_reasoner

    from investigation import compiled

    calls = pickle.loads(calls_file.read_bytes())  # a file heuristic_replay.py wrote
    reasoner = stand_in_reasoner()
    results: list[tuple[str, int, int, str]] = []
    for name in METHODS:
        method = getattr(reasoner, name)
        for n, (args, kwargs) in enumerate(calls[name]):
            rng = random.Random(f"{seed}:{name}:{n}")
            for v in range(variants + 1):
                a, k = (args, kwargs) if v == 0 else _variant(args, kwargs, rng)
                try:
                    outcome = repr(method(*a, **k))
                except Exception as exc:  # noqa: BLE001 - recorded: an exception on one side only is a finding
                    outcome = f"!{type(exc).__name__}: {exc}"
                results.append((name, n, v, outcome))
    out.write_bytes(pickle.dumps({"heuristics": compiled.status().reason, "results": results}))
    raised = sum(r[3].startswith("!") for r in results)
    print(f"{compiled.status().reason}: {len(results)} calls, {raised} raised → {out}")


def _compare(a_file: Path, b_file: Path) -> None:
    a, b = pickle.loads(a_file.read_bytes()), pickle.loads(b_file.read_bytes())
    ra, rb = a["results"], b["results"]
    assert [r[:3] for r in ra] == [r[:3] for r in rb], "the two runs replayed different calls"
    differing = [(x, y) for x, y in zip(ra, rb, strict=True) if x[3] != y[3]]
    print(f"{a['heuristics']} vs {b['heuristics']}: {len(ra)} calls, {len(differing)} differing; "
          f"raised {sum(r[3].startswith('!') for r in ra)} / {sum(r[3].startswith('!') for r in rb)}")
    for x, y in differing[:10]:
        print(f"  {x[0]} call {x[1]} variant {x[2]}:\n    {x[3][:300]}\n    {y[3][:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("calls", type=Path)
    run.add_argument("out", type=Path)
    run.add_argument("--variants", type=int, default=8, help="mutated variants per captured call")
    run.add_argument("--seed", type=int, default=0)
    compare = sub.add_parser("compare")
    compare.add_argument("a", type=Path)
    compare.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        _run(args.calls, args.out, args.variants, args.seed)
    else:
        _compare(args.a, args.b)


if __name__ == "__main__":
    main()
