"""Fuzzing the spec loader and the CLI with mutated example specs, at a long profile.

Every input is an example spec (as written, and with its references inlined) mutated by
`tests/fuzz/mutations.py`: text edits (numbers, units, deleted or repeated lines, junk, nesting,
keys, truncation), structure edits (deleted or retyped values) and byte edits (control
characters, NUL, invalid UTF-8, truncation, repeated slices, deep nesting, huge integers,
malformed and unsafe tags).  Counted:

* through `specs.load_spec`: crashes (any exception that is not a `SpecsError`), silent accepts
  (a spec that loads with a figure outside its documented range: `check_loaded`), overlong
  messages, and the slowest case;
* through the CLI (in this process, as `tasksolve` runs it), on a sample of the inputs, half of
  them ones that loaded: `validate`, `count`, `simulate --oracle analytic`, `solve --time-limit 1`
  -- exit codes outside 0/1/2/3 (70 is an internal error: a traceback written to a crash file)
  and any "Traceback" printed.

    python bench/fuzz_specs.py --cases 10000 --cli-sample 60 --seed 0
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings

from tasksolve.solver.cli import main as cli_main
from tasksolve.specs import load_spec
from tasksolve.specs.errors import SpecsError
from tests.fuzz.mutations import byte_mutation, structure_mutation, text_mutation
from tests.fuzz.test_spec_fuzz import MAX_MESSAGE, check_loaded

COMMANDS = [
    ["validate"],
    ["count"],
    ["simulate", "--oracle", "analytic"],
    ["solve", "--time-limit", "1", "--workers", "1"],
]


class Tally:
    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()
        self.examples: dict[str, bytes] = {}
        self.details: dict[str, str] = {}
        self.slowest = (0.0, b"")
        self.loaded: list[bytes] = []
        self.refused: list[bytes] = []

    def note(self, what: str, data: bytes, detail: str = "") -> None:
        self.counts[what] += 1
        self.examples.setdefault(what, data)
        self.details.setdefault(what, detail)


def load_case(data: bytes, folder: Path, tally: Tally, family: str) -> None:
    path = folder / "spec.yaml"
    path.write_bytes(data)
    tally.counts[f"cases:{family}"] += 1
    t0 = time.perf_counter()
    try:
        spec = load_spec(path)
    except SpecsError as exc:
        tally.counts["refused"] += 1
        if len(str(exc)) >= MAX_MESSAGE:
            tally.note("overlong message", data)
        if len(tally.refused) < 5000:
            tally.refused.append(data)
    except BaseException as exc:
        tally.note(f"crash:{type(exc).__name__}", data, traceback.format_exc()[-1500:])
    else:
        tally.counts["loaded"] += 1
        try:
            check_loaded(spec)
        except AssertionError as exc:
            tally.note("silent accept", data, str(exc)[:300])
        if len(tally.loaded) < 5000:
            tally.loaded.append(data)
    elapsed = time.perf_counter() - t0
    if elapsed > tally.slowest[0]:
        tally.slowest = (elapsed, data)


def _family_runner(family: str, strategy, examples: int, base_seed: int, folder: Path, tally: Tally):
    @seed(base_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=["generate"],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def case(value):
        load_case(value if isinstance(value, bytes) else value.encode(), folder, tally, family)

    return case


def run_loader(cases: int, base_seed: int, folder: Path, tally: Tally) -> None:
    per_family = cases // 3 + 1
    for family, strategy in (
        ("text", text_mutation()),
        ("structure", structure_mutation()),
        ("bytes", byte_mutation()),
    ):
        _family_runner(family, strategy, per_family, base_seed, folder, tally)()


def run_cli(sample: list[bytes], folder: Path, tally: Tally) -> None:
    for index, data in enumerate(sample):
        path = folder / f"cli-{index}.yaml"
        path.write_bytes(data)
        for command in COMMANDS:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli_main([command[0], str(path), *command[1:]])
            text = out.getvalue() + err.getvalue()
            tally.counts[f"cli:{command[0]}:exit {code}"] += 1
            if code not in (0, 1, 2, 3):
                tally.note(f"cli bad exit {code}", data, f"{command}: {text[-1000:]}")
            if "Traceback" in text:
                tally.note("cli traceback", data, f"{command}: {text[-1000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000, help="mutated inputs through the loader")
    ap.add_argument("--cli-sample", type=int, default=60, help="inputs through each CLI command")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="print one input of each failure kind")
    ap.add_argument("--save-slowest", type=Path, help="write the input that took the loader longest here")
    args = ap.parse_args()
    tally = Tally()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run_loader(args.cases, args.seed, folder, tally)
        loader_time = time.perf_counter() - start
        half = args.cli_sample // 2
        sample = tally.loaded[:: max(1, len(tally.loaded) // max(1, half))][:half]
        sample += tally.refused[:: max(1, len(tally.refused) // max(1, args.cli_sample - len(sample)))][
            : args.cli_sample - len(sample)
        ]
        t1 = time.perf_counter()
        run_cli(sample, folder, tally)
        cli_time = time.perf_counter() - t1
    total = sum(v for k, v in tally.counts.items() if k.startswith("cases:"))
    crashes = sum(v for k, v in tally.counts.items() if k.startswith("crash:"))
    print(f"machine: {platform.machine()} {platform.python_version()}; seed {args.seed}")
    print(
        f"loader: {total} cases in {loader_time:.0f} s ({', '.join(f'{k[6:]} {v}' for k, v in sorted(tally.counts.items()) if k.startswith('cases:'))}); "
        f"loaded {tally.counts['loaded']}, refused {tally.counts['refused']}"
    )
    print(
        f"  crashes (tracebacks): {crashes}; silent accepts: {tally.counts['silent accept']}; "
        f"overlong messages: {tally.counts['overlong message']}; slowest case {tally.slowest[0]:.2f} s"
    )
    cli_runs = sum(v for k, v in tally.counts.items() if k.startswith("cli:"))
    bad = sum(v for k, v in tally.counts.items() if k.startswith("cli bad exit"))
    print(
        f"cli: {len(sample)} inputs x {len(COMMANDS)} commands = {cli_runs} runs in {cli_time:.0f} s; "
        f"exit codes outside 0-3: {bad}; tracebacks printed: {tally.counts['cli traceback']}"
    )
    for key in sorted(k for k in tally.counts if k.startswith("cli:")):
        print(f"  {key[4:]}: {tally.counts[key]}")
    if args.save_slowest:
        args.save_slowest.write_bytes(tally.slowest[1])
    for what, detail in tally.details.items():
        print(f"FAILURE {what} ({tally.counts[what]}x): {detail}")
        if args.show:
            print(repr(tally.examples[what][:2000]))
    sys.exit(1 if crashes or bad or tally.counts["silent accept"] or tally.counts["cli traceback"] else 0)


if __name__ == "__main__":
    main()
