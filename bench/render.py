"""BENCHMARKS.md rendered from the results files, and checked against them.

Each section of BENCHMARKS.md between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` is the
output of ``render_markdown(data)`` of the bench script that wrote ``bench/results/<name>.json``
(the results file's ``command`` names the script; see `bench/results.py`).

    python bench/render.py                        # rewrite BENCHMARKS.md from the results files
    python bench/render.py --check                # exit 1 when a file is missing or a section differs
    python bench/render.py --check --rerun-quick  # and re-run the quick set, compare within tolerance

``--check`` fails (exit 1, naming each problem) when a section's results file is missing, when a
results file's script cannot be found or has no ``render_markdown``, or when the rendered text
differs from BENCHMARKS.md.  For every results file it warns (stderr, exit unchanged) when the
modules the figure measures have changed since it was taken (their hashes differ).

``--rerun-quick`` re-runs the results files of the quick set (`QUICK`: the scripts that run in
about two minutes together on a 2-core machine) with the command recorded in them, into a
scratch folder, and fails when a re-run figure leaves its tolerance: exact for every number
(counts, optima, throughputs of a deterministic model) unless the script lists the figure's key
in ``NOISY`` (times, rates: ``fnmatch`` patterns on the dotted key path, e.g. ``rows.*.ms``),
which must stay within a factor ``NOISE_FACTOR`` (default 5) of the recorded value either way,
or within ``NOISE_FLOOR`` of it (default 0; for sub-millisecond times) -- this machine is shared
and noisy; keys matching ``IGNORE`` (single timings of which a median is shown, timings the
section does not show) are not compared; keys matching ``FITTED`` (figures a numerical optimiser
found: an EVT fit's endpoint) must agree to `FIT_TOLERANCE` relative, since their last digits
follow the machine's floating-point kernels (on a new machine of this project's kind, with the
same code and packages, the same runs' fits came up to 4e-7 from the recorded ones).  A script
may define ``compare(old, new) -> list[str]`` instead, returning the violations.

Exit codes: 0 ok, 1 a check failed, 2 bad input (no BENCHMARKS.md, unbalanced markers).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# The quick set: section names whose scripts re-run in about two minutes in all on 2 cores.
QUICK = [
    "npire-split",
    "count-speed",
    "lata-paper",
    "evt-coverage-quick",
    "paper-lata",
    "paper-asplos12",
    "binding-proof-24",
    "calibration-t2-analytic",
    "predictors-ranking",
    "predictors-ranking-no-communication",
]

MARKER = re.compile(r"^<!-- (BEGIN|END) ([A-Za-z0-9_.-]+) -->$", re.M)  # a marker is a line of its own
DEFAULT_NOISE_FACTOR = 5.0
#: relative agreement of a re-run's `FITTED` figures (the module docstring)
FIT_TOLERANCE = 1e-5


class RenderError(Exception):
    """Bad input: BENCHMARKS.md unreadable or its markers unbalanced."""


def sections(text: str) -> list[str]:
    """Names of the marked sections of ``text``, in order; raises on unbalanced markers."""
    names, open_name = [], None
    for match in MARKER.finditer(text):
        kind, name = match.groups()
        if kind == "BEGIN":
            if open_name is not None:
                raise RenderError(f"BEGIN {name} inside section {open_name}")
            if name in names:
                raise RenderError(f"section {name} appears twice")
            open_name = name
        else:
            if open_name != name:
                raise RenderError(f"END {name} without its BEGIN (open: {open_name})")
            names.append(name)
            open_name = None
    if open_name is not None:
        raise RenderError(f"BEGIN {open_name} has no END")
    return names


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the body of section ``name`` replaced by ``body``."""
    pattern = re.compile(rf"(^<!-- BEGIN {re.escape(name)} -->\n).*?(^<!-- END {re.escape(name)} -->$)", re.S | re.M)
    block = body.strip("\n") + "\n"
    return pattern.sub(lambda m: m.group(1) + block + m.group(2), text, count=1)


def section_body(text: str, name: str) -> str:
    """The current body of section ``name`` (between its markers)."""
    match = re.search(rf"^<!-- BEGIN {re.escape(name)} -->\n(.*?)^<!-- END {re.escape(name)} -->$", text, re.S | re.M)
    return match.group(1) if match else ""


def script_of(command: str, root: Path) -> Path:
    """The bench script a results file's command runs (the first ``*.py`` argument)."""
    for word in shlex.split(command):
        if word.endswith(".py"):
            return (root / word).resolve()
    raise LookupError(f"no script in command {command!r}")


def load_script(path: Path) -> ModuleType:
    """Import a bench script by path (its folder and ``bench/`` on sys.path), without running main."""
    for folder in (path.parent, ROOT / "bench"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    name = "_bench_" + re.sub(r"\W", "_", str(path))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LookupError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def render_section(record: dict[str, Any], root: Path) -> str:
    """One section's markdown from its results record, through its script's ``render_markdown``."""
    module = load_script(script_of(record["command"], root))
    if not hasattr(module, "render_markdown"):
        raise LookupError(f"{module.__file__} defines no render_markdown")
    return module.render_markdown(record["data"]).strip("\n") + "\n"


def stale_modules(record: dict[str, Any], root: Path) -> list[str]:
    """The measured modules whose current hash differs from the one recorded (or that are gone)."""
    import hashlib

    stale = []
    for module, digest in record.get("modules", {}).items():
        path = root / module
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            stale.append(module)
    return stale


def _numbers_differ(old: float, new: float, noisy: bool, factor: float, floor: float) -> bool:
    if noisy:
        if abs(new - old) <= floor:
            return False
        if old == 0 or new == 0:
            return (old == 0) != (new == 0)
        ratio = new / old
        return not (1 / factor <= ratio <= factor)
    return not math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12)


def compare_data(
    old: Any,
    new: Any,
    noisy: list[str],
    factor: float,
    path: str = "",
    floor: float = 0.0,
    ignore: tuple = (),
    fitted: tuple = (),
) -> list[str]:
    """Where ``new`` leaves ``old``'s tolerance: exact, or within ``factor`` (or ``floor``) for keys in ``noisy``,
    or within `FIT_TOLERANCE` for keys in ``fitted``; keys matching a pattern of ``ignore`` are skipped."""
    if path and any(fnmatch.fnmatchcase(path, pattern) for pattern in ignore):
        return []
    if path and any(fnmatch.fnmatchcase(path, pattern) for pattern in fitted):
        if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
            same = math.isclose(old, new, rel_tol=FIT_TOLERANCE, abs_tol=1e-12) or (old != old and new != new)
            return [] if same else [f"{path}: {old} became {new} (within {FIT_TOLERANCE:g}, a fit)"]
    here = path or "data"
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            return [f"{here}: keys {sorted(old)} became {sorted(new)}"]
        out = []
        for key in old:
            here_key = f"{path}.{key}" if path else str(key)
            out += compare_data(old[key], new[key], noisy, factor, here_key, floor, ignore, fitted)
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{here}: {len(old)} entries became {len(new)}"]
        out = []
        for i, (a, b) in enumerate(zip(old, new)):
            out += compare_data(a, b, noisy, factor, f"{path}.{i}" if path else str(i), floor, ignore, fitted)
        return out
    numeric = (int, float)
    if isinstance(old, numeric) and isinstance(new, numeric) and not isinstance(old, bool):
        is_noisy = any(fnmatch.fnmatchcase(path, pattern) for pattern in noisy)
        if _numbers_differ(float(old), float(new), is_noisy, factor, floor):
            band = f"within x{factor:g}" if is_noisy else "exact"
            return [f"{here}: {old} became {new} ({band})"]
        return []
    return [] if old == new else [f"{here}: {old!r} became {new!r}"]


def rerun(record: dict[str, Any], root: Path, timeout: float = 300) -> tuple[dict[str, Any] | None, str]:
    """Run the record's command again into a scratch results folder; (new record or None, log)."""
    words = shlex.split(record["command"])
    if words and words[0] in ("python", "python3"):
        words[0] = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, TASKSOLVE_BENCH_RESULTS=scratch)
        try:
            done = subprocess.run(words, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f} s"
        path = Path(scratch) / f"{record['name']}.json"
        if done.returncode != 0 or not path.exists():
            return None, f"exit {done.returncode}: {done.stderr.strip()[-400:]}"
        return json.loads(path.read_text()), ""


def check_rerun(record: dict[str, Any], root: Path) -> list[str]:
    """The quick check of one results file: its re-run figures against the recorded ones."""
    new, log = rerun(record, root)
    if new is None:
        return [f"{record['name']}: re-run failed ({log})"]
    module = load_script(script_of(record["command"], root))
    if hasattr(module, "compare"):
        problems = module.compare(record["data"], new["data"])
    else:
        noisy = list(getattr(module, "NOISY", []))
        factor = float(getattr(module, "NOISE_FACTOR", DEFAULT_NOISE_FACTOR))
        floor = float(getattr(module, "NOISE_FLOOR", 0.0))
        ignore = tuple(getattr(module, "IGNORE", ()))
        fitted = tuple(getattr(module, "FITTED", ()))
        problems = compare_data(record["data"], new["data"], noisy, factor, floor=floor, ignore=ignore, fitted=fitted)
    return [f"{record['name']}: re-run {p}" for p in problems]


def _load_record(name: str, results: Path) -> dict[str, Any] | None:
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def run(
    benchmarks: Path, results: Path, root: Path, *, check: bool, rerun_quick: bool, quick: list[str]
) -> tuple[list[str], list[str], str]:
    """Render (or check) every section; returns (failures, warnings, the rendered text)."""
    text = benchmarks.read_text()
    failures, warnings = [], []
    rendered = text
    names = sections(text)
    for name in names:
        record = _load_record(name, results)
        if record is None:
            failures.append(f"{name}: results file {results / (name + '.json')} is missing")
            continue
        try:
            body = render_section(record, root)
        except Exception as exc:  # a script that cannot render is a failed check, named
            failures.append(f"{name}: cannot render ({type(exc).__name__}: {exc})")
            continue
        if check and section_body(text, name) != body:
            failures.append(f"{name}: BENCHMARKS.md differs from the rendered results (run bench/render.py)")
        rendered = replace_section(rendered, name, body)
        stale = stale_modules(record, root)
        if stale:
            warnings.append(f"{name}: measured modules changed since {record.get('date')}: {', '.join(stale)}")
        if rerun_quick and name in quick:
            failures += check_rerun(record, root)
    for path in sorted(results.glob("*.json")):
        if path.stem not in names:
            warnings.append(f"{path.stem}: results file not shown in {benchmarks.name}")
    return failures, warnings, rendered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a section is missing or differs")
    parser.add_argument("--rerun-quick", action="store_true", help="re-run the quick set and compare")
    parser.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root the commands run in")
    args = parser.parse_args(argv)
    try:
        failures, warnings, text = run(
            args.benchmarks, args.results, args.root, check=args.check, rerun_quick=args.rerun_quick, quick=QUICK
        )
    except (OSError, RenderError) as exc:
        print(f"render: {exc}", file=sys.stderr)
        return 2
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    for line in failures:
        print(f"FAIL: {line}", file=sys.stderr)
    if not args.check:
        args.benchmarks.write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
