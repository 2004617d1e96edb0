"""Mutation testing of our own: does a module's test suite fail when the module's code changes?

For one module (``--module``) and its tests (``--tests``, else `MAPPING`), every mutant -- one small
change of the module's code -- is written over the module in a temporary copy of the repository
(never in the checkout) and the tests run there (``pytest -x -q``, a timeout per mutant; a timeout
counts as killed). A mutant the tests pass *survives*: the tests do not pin what that code does.
The score is killed / (mutants - equivalent); an *equivalent* mutant (`EQUIVALENT`, with its
reason, recorded in the results file) is one that no input can tell from the module. Survivors that
are not equivalent may carry a note (`NOTES`) saying why no test pins them.

Mutants: `bench/mutants.py` (operators ``compare``, ``arith``, ``constant``, ``sign``, ``negate``,
``boolop``, ``minmax``, ``return``, ``delete``).

The copy: api/, specs/, simulate/, evt/, solver/, tests/, bench/, docs/ and pyproject.toml go to a
temporary folder per worker (at most 2), where ``_site/tasksolve`` rebuilds the installed layout
(links to the copied folders) and comes first on ``PYTHONPATH``, so ``tasksolve`` imports the copy
(the editable install's finder comes after ``sys.path``). Before any mutant the run checks that the
module imports from the copy and that a sanity mutant (the module raising at the end of its import)
is killed. Byte code of the mutated module is never written (``PYTHONDONTWRITEBYTECODE``; a stale
``.pyc`` of the same size and second would hide a mutant).

    python bench/mutation.py --module solver/certify/verdict.py --out bench/results/mutation-verdict.json
    python bench/mutation.py --all                        # every module of MAPPING
    python bench/mutation.py --list-survivors --out bench/results/mutation-verdict.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.mutants import key, mutants  # noqa: E402
from bench.results import commit_now, markdown_table, results_dir, write_results  # noqa: E402

#: module -> (results name, its tests: fast, direct ones first, since -x stops at the first failure)
MAPPING: dict[str, tuple[str, list[str]]] = {
    "solver/certify/verdict.py": (
        "mutation-verdict",
        [
            "tests/certify/test_verdict_boundaries.py",
            "tests/certify/test_verdict.py",
            "tests/certify/test_noisy.py",
            "tests/certify/test_top_atom.py",
            "tests/certify/test_contradictions.py",
        ],
    ),
    "evt/endpoint.py": ("mutation-endpoint", ["tests/evt/test_endpoint_branches.py", "tests/evt/test_evt_endpoint.py"]),
    "solver/certify/fluid_lp.py": (
        "mutation-fluid_lp",
        ["tests/certify/test_fluid_lp_constraints.py", "tests/certify/test_fluid_bound.py"],
    ),
}
_LP_ROWS, _CONFIGURATIONS, _LEVELS = (
    "tests/solver/test_lp_constraints.py",
    "tests/solver/test_configurations.py",
    "tests/solver/test_level_lp.py",
)
MAPPING["solver/binding/configuration_lp.py"] = (
    "mutation-configuration_lp",
    ["tests/solver/test_configuration_lp_pins.py", _LP_ROWS, _CONFIGURATIONS],
)
MAPPING["solver/binding/level_lp.py"] = ("mutation-level_lp", ["tests/solver/test_level_lp_pins.py", _LP_ROWS, _LEVELS])
MAPPING["solver/binding/configurations.py"] = ("mutation-configurations", [_LP_ROWS, _CONFIGURATIONS, _LEVELS])

from bench.mutation_notes import EQUIVALENT, NOTES  # noqa: E402

COPIED = ("api", "specs", "simulate", "evt", "solver", "tests", "bench", "docs")
COPIED_FILES = ("pyproject.toml", "README.md", "BENCHMARKS.md")
PACKAGES = ("specs", "simulate", "evt", "solver")  # mapped under tasksolve (pyproject.toml)
MAX_WORKERS = 2
#: third-party modules a worker imports once; each mutant's test run is a fork of it (tasksolve is
#: imported afresh, from the copy, in every run)
PRELOAD = ("numpy", "scipy.stats", "scipy.optimize", "scipy.special", "hypothesis", "pytest", "yaml", "pydantic")


# --------------------------------------------------------------------------- running them
def import_name(module: str) -> str:
    parts = Path(module).with_suffix("").parts
    if parts[0] == "api":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("tasksolve", *parts))


def make_copy(dest: Path) -> Path:
    """A copy of the repository under `dest`, with ``_site/tasksolve`` pointing into it."""
    skip = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", "*.pyc")
    for folder in COPIED:
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, dest / folder, ignore=skip, symlinks=True)
    for name in COPIED_FILES:
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    site = dest / "_site" / "tasksolve"
    site.mkdir(parents=True)
    for entry in (dest / "api").iterdir():
        (site / entry.name).symlink_to(entry)
    for package in PACKAGES:
        (site / package).symlink_to(dest / package, target_is_directory=True)
    return dest


def _env(copy: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(copy / "_site"), PYTHONDONTWRITEBYTECODE="1")


_RUNNING: list[int] = []  # the test run of this worker (a process group), killed with it


def _stop(signum: int, frame: object) -> None:
    """SIGTERM: end the running tests (their own session, so their whole group) and exit."""
    for pid in list(_RUNNING):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    raise SystemExit(1)


def _pytest_child(copy: Path, tests: list[str], bytecode: bool) -> None:
    """In the forked child: pytest as ``python -m pytest`` would run it in `copy`, then exit."""
    code = 3
    try:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.chdir(copy)
        sys.dont_write_bytecode = not bytecode
        ours = {"", str(ROOT), str(ROOT / "bench")}  # this script's entries: the checkout, not the copy
        sys.path[:] = [str(copy / "_site"), str(copy), *(p for p in sys.path if p not in ours)]
        import pytest

        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
    finally:
        os._exit(code)


def run_tests(copy: Path, tests: list[str], timeout: float, bytecode: bool = False) -> tuple[str, float, int]:
    """(status, seconds, exit code) of ``pytest -x -q`` on `tests` in `copy`, in a forked child of this
    worker (which has imported the third-party modules once: `PRELOAD`)."""
    assert "tasksolve" not in sys.modules, "a worker must not import tasksolve: its children import the copy"
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _pytest_child(copy, tests, bytecode)
    _RUNNING.append(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - start > timeout:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", time.monotonic() - start, -9
            time.sleep(0.02)
    finally:
        _RUNNING.remove(pid)
    seconds, code = time.monotonic() - start, os.waitstatus_to_exitcode(status)
    if code in (4, 5):  # pytest's usage error / no tests collected: nothing was tested
        return "error", seconds, code
    return ("survived" if code == 0 else "killed"), seconds, code


def _write_module(copy: Path, module: str, source: str) -> None:
    path = copy / module
    for stale in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        stale.unlink()
    path.write_text(source)


def _worker(copy: str, module: str, tests: list[str], original: str, tasks, results) -> None:
    """One worker: its copy; the baseline run, then mutants from `tasks` until None; answers on `results`
    (a pipe: no feeder thread in a process that forks)."""
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which ends the workers
    os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # no threads to fork
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    here = Path(copy)
    results.send(("baseline", *run_tests(here, tests, 1800, bytecode=True)))  # warm byte code
    while (task := tasks.get()) is not None:
        index, source, timeout = task
        _write_module(here, module, source)
        try:
            results.send((index, *run_tests(here, tests, timeout)))
        finally:
            _write_module(here, module, original)


def check_import(copy: Path, module: str) -> None:
    """The module imports from the copy (a fresh interpreter with the copy's ``PYTHONPATH``)."""
    probe = f"import importlib, os; print(os.path.realpath(importlib.import_module('{import_name(module)}').__file__))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=_env(copy), capture_output=True, text=True)
    where = done.stdout.strip()
    if where != os.path.realpath(copy / module):
        raise SystemExit(f"mutation: {import_name(module)} imports from {where or done.stderr[-300:]}, not the copy")


def _answers(pipes: list, count: int):
    """`count` answers from the workers' pipes, as they come (a worker done with the tasks closes its pipe)."""
    while count:
        if not pipes:
            raise SystemExit(f"mutation: the workers stopped with {count} answers missing")
        ready = multiprocessing.connection.wait(pipes)[0]
        try:
            answer = ready.recv()
        except EOFError:
            pipes.remove(ready)
            continue
        count -= 1
        yield answer


def mutate(
    module: str, tests: list[str], workers: int, lines: set[int] | None = None, only: set[str] | None = None
) -> dict:
    """Run every mutant of `module` (on `lines`; with keys in `only`) against `tests`; the results
    file's ``data``."""
    started, load, commit = time.monotonic(), os.getloadavg()[0], commit_now()
    signal.signal(signal.SIGTERM, _stop)  # a killed run ends its workers (and they their tests)
    original = (ROOT / module).read_text()
    found = [m for m in mutants(original) if (not lines or m.line in lines) and (only is None or m.key in only)]
    workers = max(1, min(workers, MAX_WORKERS, len(found)))
    ctx = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="mutation-") as scratch:
        copies = [make_copy(Path(scratch) / f"copy{i}") for i in range(workers)]
        for copy in copies:
            check_import(copy, module)
        tasks, pipes, procs = ctx.Queue(), [], []
        for copy in copies:
            ours, theirs = ctx.Pipe(duplex=False)
            procs.append(ctx.Process(target=_worker, args=(str(copy), module, tests, original, tasks, theirs)))
            pipes.append(ours)
            procs[-1].start()
            theirs.close()  # the worker's end: its exit closes the pipe
        try:
            baselines = list(_answers(pipes, workers))
            if any(status != "survived" for _, status, _, _ in baselines):
                raise SystemExit(f"mutation: the tests fail on the unmutated module: {baselines}")
            baseline = max(seconds for _, _, seconds, _ in baselines)
            timeout = 3 * baseline + 30
            tasks.put((-1, original + '\nraise RuntimeError("mutation sanity check")\n', timeout))
            sanity = next(_answers(pipes, 1))
            if sanity[1] != "killed":
                raise SystemExit(f"mutation: the sanity mutant of {module} was not killed ({sanity})")
            for m in found:
                tasks.put((m.id, m.source, timeout))
            for _ in procs:
                tasks.put(None)
            outcome: dict[int, tuple[str, float, int]] = {}
            by_id = {m.id: m for m in found}
            for index, status, seconds, code in _answers(pipes, len(found)):
                outcome[index] = (status, seconds, code)
                print(f"  [{len(outcome)}/{len(found)}] {status:8s} {by_id[index].key}", flush=True)
        finally:
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
                proc.join()
    rows = []
    for m in found:
        status, seconds, code = outcome[m.id]
        row = {k: v for k, v in asdict(m).items() if k != "source"} | {"status": status, "seconds": round(seconds, 2)}
        rows.append(row | {"exit": code})
    data = summarise(module, tests, rows, workers, timeout, baseline, time.monotonic() - started, load)
    return data | {"ran_on_commit": commit}  # the copies' commit (the file's `commit` is the writer's)


def summarise(
    module: str,
    tests: list[str],
    rows: list[dict],
    workers: int,
    timeout: float,
    baseline: float,
    seconds: float,
    load: float,
) -> dict:
    """Counts, the score and the survivors (equivalent ones apart, with their reasons)."""
    equivalent, survivors = [], []
    for row in rows:
        name = key(row["line"], row["col"], row["description"])
        if row["status"] == "survived" and (module, name) in EQUIVALENT:
            row["status"] = "equivalent"
            equivalent.append(
                {"line": row["line"], "description": row["description"], "reason": EQUIVALENT[module, name]}
            )
        elif row["status"] == "survived":
            survivors.append(
                {"line": row["line"], "description": row["description"], "note": NOTES.get((module, name))}
            )
    counts = Counter(row["status"] for row in rows)
    judged = len(rows) - counts["equivalent"] - counts["error"]
    caught = counts["killed"] + counts["timeout"]
    by_operator: dict[str, dict[str, int]] = {}
    for row in rows:
        by_operator.setdefault(row["operator"], Counter())[row["status"]] += 1
    name = MAPPING.get(module, (f"mutation-{Path(module).stem}", []))[0]
    command = f"python bench/mutation.py --module {module} --out bench/results/{name}.json"
    if tests != MAPPING.get(module, ("", []))[1]:
        command += f' --tests "{" ".join(tests)}"'
    return {
        "command": command,
        "module": module,
        "tests": tests,
        "workers": workers,
        "timeout_s": round(timeout, 1),
        "baseline_s": round(baseline, 2),
        "seconds": round(seconds, 1),
        "load_at_start": load,
        "mutants": len(rows),
        "killed": counts["killed"],
        "timeouts": counts["timeout"],
        "survived": counts["survived"],
        "errors": counts["error"],
        "score": caught / judged if judged else None,
        "raw_score": caught / len(rows) if rows else None,
        "by_operator": {k: dict(sorted(v.items())) for k, v in sorted(by_operator.items())},
        "equivalent": equivalent,
        "survivors": survivors,
        "results": rows,
    }


# --------------------------------------------------------------------------- reporting
def score_line(data: dict) -> str:
    caught = data["killed"] + data["timeouts"]
    judged = data["mutants"] - len(data["equivalent"]) - data["errors"]
    score = f"{data['score']:.1%}" if data["score"] is not None else "n/a"
    return (
        f"{data['module']}: {caught} of {judged} behaviour-changing mutants killed ({score}; "
        f"{data['timeouts']} by timeout), {len(data['equivalent'])} equivalent, {data['survived']} surviving, "
        f"{data['mutants']} mutants in {data['seconds']:.0f} s"
    )


def _where(lines: list[int]) -> str:
    """``line 12``, or ``4 mutants on lines 102, 115``."""
    if len(lines) == 1:
        return f"line {lines[0]}"
    places = sorted(set(lines))
    return f"{len(lines)} mutants on line{'s' if len(places) > 1 else ''} {', '.join(map(str, places))}"


def _carried(data: dict) -> str:
    """What a survivors-only run (`bench/mutation_rerun.py`) took from the run before it."""
    c = data.get("carried")
    if not c:
        return ""
    return (
        f"Killed mutants carried from the run on commit {c['from_commit'][:7]} ({c['killed']}: the module unchanged, "
        f"tests only added since); its {c['rerun']} survivors run again, the seconds and load above theirs.\n\n"
    )


def render_markdown(data: dict) -> str:
    """The section of BENCHMARKS.md on one module's mutation score."""
    ops = [
        [op, *(c.get(s, 0) for s in ("killed", "timeout", "survived", "equivalent"))]
        for op, c in data["by_operator"].items()
    ]
    text = (
        f"Command: `{data['command']}` (tests: {', '.join(f'`{t}`' for t in data['tests'])}; "
        f"{data['workers']} workers, {data['timeout_s']:.0f} s timeout per mutant, baseline run "
        f"{data['baseline_s']:.1f} s, {data['seconds']:.0f} s in all at load {data['load_at_start']:.1f}).\n\n"
        f"**{score_line(data)}.**\n\n"
        + _carried(data)
        + markdown_table(["operator", "killed", "timeout", "survived", "equivalent"], ops)
    )
    if data["survivors"]:
        alike: dict[tuple[str, str], list[int]] = {}  # one line per description and note, with its lines
        for survivor in data["survivors"]:
            alike.setdefault((survivor["description"], survivor.get("note") or ""), []).append(survivor["line"])
        text += "\n\nSurvivors:\n\n" + "\n".join(
            f"- {_where(lines)}, {what}" + (f": {note}" if note else "") for (what, note), lines in alike.items()
        )
    if data["equivalent"]:
        text += "\n\nEquivalent (no input tells them from the module):\n\n" + "\n".join(
            f"- line {e['line']}, {e['description']}: {e['reason']}" for e in data["equivalent"]
        )
    return text


def list_survivors(path: Path) -> None:
    record = json.loads(path.read_text())
    data = record["data"]
    lines = (ROOT / data["module"]).read_text().splitlines()
    print(score_line(data))
    for s in data["survivors"]:
        print(f"  L{s['line']}: {s['description']}\n      | {lines[s['line'] - 1].strip()}")
        if s.get("note"):
            print(f"      note: {s['note']}")
    for e in data["equivalent"]:
        print(f"  equivalent L{e['line']}: {e['description']} ({e['reason']})")


def _existing(tests: list[str]) -> list[str]:
    """The mapped tests that exist (some are being written beside this script)."""
    return [t for t in tests if (ROOT / t).exists()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", help="the module to mutate, relative to the repository root")
    ap.add_argument("--tests", help="test paths, space-separated (default: MAPPING's)")
    ap.add_argument("--out", type=Path, help="results file (default bench/results/<MAPPING's name>.json)")
    ap.add_argument("--all", action="store_true", help="every module of MAPPING")
    ap.add_argument("--workers", type=int, default=MAX_WORKERS, help=f"parallel test runs (at most {MAX_WORKERS})")
    ap.add_argument("--lines", help="only mutants on these lines (comma-separated); prints, writes no file")
    ap.add_argument("--dry-run", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("--list-survivors", action="store_true", help="print the survivors of the results file(s)")
    args = ap.parse_args(argv)
    modules = list(MAPPING) if args.all else [args.module] if args.module else []
    if args.list_survivors and args.out and not modules:  # the results file names its module
        list_survivors(args.out)
        return 0
    if not modules:
        ap.error("--module or --all (or --list-survivors with --out)")
    for module in modules:
        name, mapped = MAPPING.get(module, (f"mutation-{Path(module).stem}", []))
        out = args.out if args.out and not args.all else results_dir() / f"{name}.json"
        if args.list_survivors:
            list_survivors(out)
            continue
        if args.dry_run:
            for m in mutants((ROOT / module).read_text()):
                print(f"{m.id:4d} {m.key}")
            continue
        tests = args.tests.split() if args.tests else _existing(mapped)
        if not tests:
            print(f"{module}: no tests, skipped", file=sys.stderr)
            continue
        lines = {int(x) for x in args.lines.split(",")} if args.lines else None
        data = mutate(module, tests, args.workers, lines)
        print(score_line(data))
        if lines is None:
            folder = Path(os.environ.get("TASKSOLVE_BENCH_RESULTS") or out.parent)
            os.environ["TASKSOLVE_BENCH_RESULTS"] = str(folder)
            path = write_results(out.stem, data, modules=[module, *tests], command=data["command"])
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
