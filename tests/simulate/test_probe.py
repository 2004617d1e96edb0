"""`topology probe`: the analysis of latency/interference matrices (real data of a 16-core KVM
guest and synthetic hierarchies with known truth), the compiled helper and its fallback, the CLI."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate.probe import helper
from tasksolve.simulate.probe.analysis import PairSample, analyse
from tasksolve.simulate.probe.classes import GAP, class_boundaries
from tasksolve.simulate.probe.measure import choose_backend, probe
from tasksolve.simulate.probe.report import read_csv, with_costs, write_csv
from tasksolve.simulate.probe.structure import propose
from tasksolve.solver.cli import main
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import load_topology
from tasksolve.specs.topology import Topology

REAL = Path(__file__).resolve().parents[1] / "data" / "realhost"
RUNS = [REAL / "latency-interference-run1.csv", REAL / "latency-interference-run2.csv"]


def real_topology():
    return load_topology(REAL / "topology-host.yaml")


def test_the_real_guest_unstable_pairs_are_those_whose_latency_class_changed():
    runs = [read_csv(path) for path in RUNS]
    analysis = analyse(runs, real_topology())
    # independently of the analysis: the pairs that are near (< half the median) in exactly one run
    typical = statistics.median(s.latency_ns for run in runs for s in run.values())
    near = [{p for p, s in run.items() if s.latency_ns < typical / 2} for run in runs]
    moved = near[0] ^ near[1]
    assert moved, "the data holds pairs that moved"
    assert {r.pair for r in analysis.unstable} == moved
    assert analysis.hidden == []  # nothing near in both runs
    assert analysis.stable_share == pytest.approx(1 - len(moved) / 120)
    (cost,) = analysis.costs
    regular = [statistics.median(run[p].latency_ns for run in runs) for p in runs[0] if p not in moved]
    assert cost.level == "machine" and cost.pairs == 120 - len(moved) and cost.left_out == len(moved)
    assert cost.latency_ns == pytest.approx(statistics.median(regular), abs=0.01)
    assert cost.cycles == pytest.approx(cost.latency_ns * 2.1, rel=1e-3)
    assert any("unstable placement" in f for f in analysis.findings)
    assert analysis.worst_ratio == min(s.ratio for run in runs for s in run.values())


def test_one_real_run_shows_hidden_sharing_and_says_stability_was_not_tested():
    run = read_csv(RUNS[0])
    analysis = analyse([run], real_topology())
    typical = statistics.median(s.latency_ns for s in run.values())
    assert {r.pair for r in analysis.hidden} == {p for p, s in run.items() if s.latency_ns < typical / 2}
    assert analysis.stable_share is None and any("stability not tested" in f for f in analysis.findings)


def two_socket_topology() -> Topology:
    return Topology.model_validate(
        {"name": "s2c4", "clock": "2GHz", "levels": [{"name": "socket", "count": 2}, {"name": "core", "count": 4}]}
    )


def synthetic(latency_of, ratio_of=lambda p: 0.98, jitter=(1.0, 1.06, 0.95)) -> list[dict]:
    pairs = [(a, b) for a in range(8) for b in range(a + 1, 8)]
    return [{p: PairSample(latency_of(p) * j, ratio_of(p), ratio_of(p)) for p in pairs} for j in jitter]


def same_socket(p) -> bool:
    return p[0] // 4 == p[1] // 4


def test_a_uniform_two_socket_host_gets_its_two_costs_and_no_finding():
    reps = synthetic(lambda p: 40.0 if same_socket(p) else 130.0)
    analysis = analyse(reps, two_socket_topology())
    costs = {c.level: c for c in analysis.costs}
    assert [c.level for c in analysis.costs] == ["socket", "machine"]  # innermost first
    assert costs["socket"].latency_ns == pytest.approx(40.0) and costs["machine"].latency_ns == pytest.approx(130.0)
    assert costs["socket"].cycles == pytest.approx(80.0) and costs["socket"].pairs == 12
    assert analysis.hidden == [] and analysis.unstable == [] and analysis.stable_share == 1.0
    topo, notes = with_costs(two_socket_topology(), analysis)
    assert topo.communication.cycles == {"socket": 80.0, "machine": 260.0}
    assert topo.message_cycles(-1, 64) == 260.0 and any("measured by" in n for n in notes)


def test_hidden_smt_siblings_and_a_moving_pair_are_found_and_left_out_of_the_costs():
    def latency(p):
        if p == (0, 5):
            return 15.0  # behaves as SMT siblings across the sockets the topology shows
        return 40.0 if same_socket(p) else 130.0

    reps = synthetic(latency, ratio_of=lambda p: 0.55 if p == (0, 5) else 0.98)
    moving = (2, 6)
    reps[1][moving] = PairSample(40.0, 0.97, 0.99)  # near in one repetition only
    analysis = analyse(reps, two_socket_topology())
    (hidden,) = analysis.hidden
    assert hidden.pair == (0, 5) and hidden.smt_like and hidden.level == "machine"
    assert [r.pair for r in analysis.unstable] == [moving]
    machine = analysis.costs[-1]
    assert machine.left_out == 2 and machine.latency_ns == pytest.approx(130.0)
    assert any("SMT siblings" in f for f in analysis.findings)


def test_an_inner_level_dearer_than_the_outer_one_is_reported():
    reps = synthetic(lambda p: 200.0 if same_socket(p) else 100.0)
    analysis = analyse(reps, two_socket_topology())
    assert any("costs more than" in f for f in analysis.findings)


@given(
    st.lists(st.floats(10, 12.5), min_size=1, max_size=30),
    st.lists(st.floats(40, 50), min_size=1, max_size=30),
)
def test_two_clusters_a_gap_apart_give_one_boundary_between_them(low, high):
    (boundary,) = class_boundaries(low + high)
    assert max(low) < boundary < min(high)
    assert class_boundaries([10 * (GAP * 0.95) ** i for i in range(6)]) == []  # steps below the gap: one class


def test_bad_csv_rows_name_their_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j\n0,1,50,1,1\n0,2,fast,1,1\n")
    with pytest.raises(SpecError, match=r"bad.csv:3:5: `fast` is not a latency"):
        read_csv(bad)
    run = read_csv(RUNS[0])
    again = tmp_path / "again.csv"
    again.write_text(write_csv(run))
    assert read_csv(again).keys() == run.keys()


def test_without_a_compiler_the_python_fallback_is_used_and_said(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    path, note = helper.build_helper()
    assert path is None and "no-such-compiler-xyz" in note
    backend, said = choose_backend("auto")
    assert backend.name == "python" and "interpreter" in said
    assert not any(tmp_path.iterdir()) or not list(tmp_path.rglob("probe"))


def test_a_failing_compiler_never_raises(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", "false")
    path, note = helper.build_helper()
    assert path is None and "failed" in note


needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")


@needs_two_cpus
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_the_compiled_helper_measures_nanoseconds(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    path, _ = helper.build_helper()
    assert path is not None and path.is_relative_to(tmp_path)
    a, b = sorted(os.sched_getaffinity(0))[:2]
    data = probe([a, b], repeats=1, prefer="compiled")
    (sample,) = data.repetitions[0].values()
    assert data.backend == "compiled" and 1.0 < sample.latency_ns < 5_000.0
    assert sample.ratio_i > 0 and sample.ratio_j > 0


def run_cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_loads_saved_runs_and_writes_a_topology_that_loads_back(capsys, tmp_path):
    out = tmp_path / "measured.yaml"
    args = ["topology", "probe", "--topology", str(REAL / "topology-host.yaml"), "--output", str(out), "--json"]
    code, stdout, _ = run_cli(capsys, *args, *[a for path in RUNS for a in ("--load", str(path))])
    assert code == 0
    data = json.loads(stdout)
    assert data["backend"] == "loaded" and len(data["analysis"]["unstable"]) >= 1
    topo = load_topology(out)
    assert topo.communication.cycles["machine"] == data["analysis"]["costs"][0]["cycles"]
    assert "unstable placement" in out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cpus", "0-x"], "--cpus"),
        (["--cpus", "100000"], "not in the topology"),
        (["--backend", "fortran"], "--backend"),
        (["--load", "no-such-file.csv"], "no-such-file.csv: no such file"),
    ],
)
def test_cli_bad_input_exits_2_with_one_message(capsys, args, message):
    code, _, err = run_cli(capsys, "topology", "probe", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_tree_that_distinguishes_what_the_host_does_not_is_reported(capsys):
    """The real guest's matrices against a synthetic two-socket sysfs tree: CPUs 0-7 share a
    socket there, yet their latencies are those of the rest."""
    sysfs = Path(__file__).resolve().parents[1] / "data" / "sysfs" / "server-2s"
    args = ["topology", "probe", "--topology", str(sysfs), "--json"]
    code, stdout, _ = run_cli(capsys, *args, *[a for path in RUNS for a in ("--load", str(path))])
    assert code == 0
    analysis = json.loads(stdout)["analysis"]
    assert [c["level"] for c in analysis["costs"]] == ["socket", "machine"]
    assert any("cost the same" in f for f in analysis["findings"])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(2, 4), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_a_synthetic_hierarchy_under_noise_is_proposed_as_it_is(branching, rnd):
    """Domains nested `branching` deep (innermost first), each level 3x dearer than the one inside,
    +-10% noise, CPU numbers shuffled: the proposal finds the same groups, innermost first."""
    sizes = [math.prod(branching[: k + 1]) for k in range(len(branching))]
    total = sizes[-1] * 2
    label = list(range(total))
    rnd.shuffle(label)

    def shared(a, b):  # the innermost level whose domain holds both (positions, not labels)
        return next((k for k, size in enumerate(sizes) if a // size == b // size), len(sizes))

    run = {}
    for a in range(total):
        for b in range(a + 1, total):
            x, y = sorted((label[a], label[b]))
            run[(x, y)] = PairSample(10.0 * 3 ** shared(a, b) * rnd.uniform(0.9, 1.1))
    found = propose(analyse([run]))
    assert found.tree and [level.size for level in found.levels] == sizes
    for level, size in zip(found.levels, sizes):
        truth = sorted(sorted(label[i] for i in range(start, start + size)) for start in range(0, total, size))
        assert sorted(level.groups) == truth


def test_a_probe_csv_missing_pairs_is_one_located_message(tmp_path):
    partial = tmp_path / "partial.csv"
    partial.write_text("cpu_i,cpu_j,latency_ns\n0,1,20\n2,3,20\n")
    with pytest.raises(SpecError, match=r"partial.csv:1:1: 4 pair\(s\) of CPUs 0-3 missing \(0-2, 0-3, 1-2, 1-3\)"):
        read_csv(partial)


@pytest.mark.parametrize(
    "args",
    [
        ["--clock", "2GHz"],  # measuring: the host topology's clock
        ["--clock", "2GHz", "--load", str(RUNS[0]), "--topology", str(REAL / "topology-host.yaml")],
        ["--clock", "fast", "--load", str(RUNS[0])],
        ["--cpus", "0-3", "--load", str(RUNS[0])],
    ],
)
def test_clock_and_cpus_are_refused_where_they_mean_nothing(capsys, args):
    code, _, err = run_cli(capsys, "topology", "probe", *args)
    assert code == 2 and args[0] in err


def test_lone_cpus_are_never_inferred_to_be_a_domain():
    """One near pair among four CPUs: the two others are left alone, not made a pair of their own."""
    run = {(a, b): PairSample(10.0 if (a, b) == (0, 1) else 100.0) for a in range(4) for b in range(a + 1, 4)}
    found = propose(analyse([run]))
    (level,) = found.levels
    assert level.groups == [[0, 1], [2], [3]] and level.inferred is None and not found.tree
