"""`topology probe`: kinds of core told apart by the compute loop's rate alone
(`simulate.probe.kinds`), on synthetic repetitions with known truth -- no measurement."""

from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path

import pytest

from tasksolve.simulate.probe.analysis import PairSample, analyse
from tasksolve.simulate.probe.kinds import FLOOR, MIN_RUNS, NOISE_TIMES, tell_kinds
from tasksolve.simulate.probe.loading import read_csv
from tasksolve.simulate.probe.measure import measure_pair
from tasksolve.simulate.probe.report import with_costs, write_csv
from tasksolve.solver.cli import main
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import load_topology
from tasksolve.specs.topology import Topology

REAL = Path(__file__).resolve().parents[1] / "data" / "realhost"
PUBLIC = Path(__file__).resolve().parents[1] / "data" / "core-to-core-latency"
FAST = 2.0e9  # iterations per second of the fastest kind
SLOW = 0.58  # the slow kind's speed


def runs(rates, latency_of, sigma, repeats=3, seed=0, offsets=0.0, outliers=0.0) -> list[dict]:
    """`repeats` repetitions of every pair of the CPUs of `rates` (CPU -> true rate alone): each run
    alone is the true rate times a CPU's fixed offset (uniform within +-`offsets`: turbo bins of
    one kind), times Gaussian noise of `sigma`, and with probability `outliers` halved (another
    process took the CPU)."""
    rng = random.Random(seed)
    cpus = sorted(rates)
    bias = {c: 1 + rng.uniform(-offsets, offsets) for c in cpus}

    def alone(cpu: int) -> float:
        rate = rates[cpu] * bias[cpu] * max(0.05, rng.gauss(1, sigma))
        return rate / 2 if rng.random() < outliers else rate

    return [
        {
            (a, b): PairSample(latency_of(a, b) * rng.uniform(0.97, 1.03), 0.97, 0.97, alone(a), alone(b))
            for i, a in enumerate(cpus)
            for b in cpus[i + 1 :]
        }
        for _ in range(repeats)
    ]


def flat(a: int, b: int) -> float:
    return 60.0


def clusters(a: int, b: int) -> float:
    """Four domains of four CPUs: 20 ns inside one, 80 between (a uniform tree to propose)."""
    return 20.0 if a // 4 == b // 4 else 80.0


def hybrid(slow: set[int], n: int = 24) -> dict[int, float]:
    return {c: FAST * (SLOW if c in slow else 1.0) for c in range(n)}


def speed_tolerance(sigma: float, cpus: int, repeats: int) -> float:
    """Four standard deviations of the ratio of two medians of a CPU's (cpus - 1) x repeats runs
    (the median of k Gaussian runs has a standard deviation of 1.2533 sigma / sqrt(k)); the kinds'
    medians over several CPUs are closer still."""
    one = 1.2533 * sigma / math.sqrt((cpus - 1) * repeats)
    return 4 * math.sqrt(2) * one


@pytest.mark.parametrize(
    ("sigma", "offsets", "outliers", "seed"),
    [(0.03, 0.0, 0.0, 0), (0.03, 0.0, 0.0, 1), (0.08, 0.03, 0.05, 2), (0.08, 0.03, 0.05, 3)],
)
def test_a_hybrid_set_gives_two_kinds_with_its_cpus_and_speeds(sigma, offsets, outliers, seed):
    slow = set(range(16, 24))
    analysis = analyse(runs(hybrid(slow), flat, sigma, seed=seed, offsets=offsets, outliers=outliers))
    kinds = analysis.kinds
    assert [k.cpus for k in kinds.kinds] == [list(range(16)), list(range(16, 24))]
    assert kinds.kinds[0].speed == 1.0
    # the fixed offsets of one kind's CPUs (+-offsets) move its median rate by at most that
    assert kinds.kinds[1].speed == pytest.approx(SLOW, abs=SLOW * (offsets + speed_tolerance(sigma, 24, 3)))
    assert kinds.runs == 23 * 3 and kinds.step == pytest.approx(max(FLOOR, NOISE_TIMES * kinds.noise))
    said = [f for f in analysis.findings if "kinds of core" in f]
    assert len(said) == 1 and said[0].startswith(
        f"two kinds of core: CPUs 0-15 at 1.00, CPUs 16-23 at {kinds.kinds[1].speed:.2f} of the fastest"
    )
    shown = analysis.to_dict()["kinds"]
    assert [(k["name"], k["cpus"]) for k in shown["kinds"]] == [("kind_a", "0-15"), ("kind_b", "16-23")]
    assert len(shown["cpu_rates"]) == 24


def test_three_kinds_interleaved_in_cpu_numbers_are_told_apart():
    """Kinds are told by rate, not by CPU number: every third CPU of each speed."""
    speeds = {c: (1.0, 0.7, 0.45)[c % 3] for c in range(12)}
    analysis = analyse(runs({c: FAST * s for c, s in speeds.items()}, flat, 0.03, seed=5))
    found = analysis.kinds.kinds
    assert [k.cpus for k in found] == [[c for c in range(12) if c % 3 == r] for r in range(3)]
    for kind, truth in zip(found, (1.0, 0.7, 0.45)):
        assert kind.speed == pytest.approx(truth, abs=truth * speed_tolerance(0.03, 12, 3))
    assert any(f.startswith("three kinds of core") for f in analysis.findings)


@pytest.mark.parametrize("seed", range(6))
def test_a_homogeneous_set_under_noise_gives_no_kinds(seed):
    """One kind with 8% noise per run, turbo bins of +-3% and a run in twenty halved: no kinds."""
    reps = runs(hybrid(set()), flat, 0.08, seed=seed, offsets=0.03, outliers=0.05)
    analysis = analyse(reps)
    assert [k.cpus for k in analysis.kinds.kinds] == [list(range(24))]
    assert not any("kinds of core" in f for f in analysis.findings)
    assert analysis.kinds.finding() is None


def test_the_noise_sets_the_step_so_a_noisy_host_makes_up_no_kinds():
    """Four CPUs of one kind, one repetition (three runs each), 20% noise per run: the CPUs'
    medians lie more than the 10% floor apart for some seeds -- a floor alone would make up kinds
    there -- yet the step, three times the noise, keeps them one kind for every seed."""
    floor_alone_splits = 0
    for seed in range(40):
        reps = runs(hybrid(set(), n=4), flat, 0.2, repeats=1, seed=seed)
        kinds = tell_kinds(reps)
        rates = sorted(kinds.rates.values())
        floor_alone_splits += any(b > (1 + FLOOR) * a for a, b in zip(rates, rates[1:]))
        assert len(kinds.kinds) == 1, seed
        assert kinds.step > FLOOR
    assert floor_alone_splits > 0


def test_too_few_runs_tell_nothing_and_say_why():
    reps = runs(hybrid({1}, n=2), flat, 0.01, repeats=MIN_RUNS - 1)
    kinds = tell_kinds(reps)
    assert kinds.kinds == [] and f"at least {MIN_RUNS}" in kinds.why_not
    assert kinds.finding() is None


class FakeBackend:
    """Rates alone of 100 and 60 iterations per wall second, CPU 1 running half the time (another
    process shared it); 90 and 30 together."""

    def latency(self, a, b):
        return 42.0

    def loop(self, cpus):
        return {(0,): [(100.0, 1.0)], (1,): [(60.0, 0.5)], (0, 1): [(90.0, 1.0), (30.0, 1.0)]}[tuple(cpus)]


def test_measuring_a_pair_keeps_both_rates_alone_per_second_run():
    sample = measure_pair(FakeBackend(), 0, 1)
    assert (sample.alone_i, sample.alone_j) == (100.0, 120.0)  # CPU 1 ran 60 in half a second
    assert (sample.ratio_i, sample.ratio_j) == (pytest.approx(0.9), pytest.approx(0.5))  # wall rates


# ------------------------------------------------------------------ files
def test_old_csvs_without_rates_alone_still_load_and_tell_no_kinds():
    old = [read_csv(path) for path in sorted(REAL.glob("latency-interference-run*.csv"))]
    assert old and all(s.ratio is not None and s.alone_i is None for run in old for s in run.values())
    analysis = analyse(old)
    assert analysis.kinds is None and analysis.to_dict()["kinds"] is None
    assert not any("kinds of core" in f for f in analysis.findings)
    public = read_csv(PUBLIC / "dual-sparc-t4.csv")  # a latency-only public matrix: none either
    assert analyse([public]).kinds is None


def test_rates_alone_round_trip_through_the_probe_csv_and_follow_their_cpu(tmp_path):
    (rep,) = runs(hybrid({2}, n=4), flat, 0.05, repeats=1)
    path = tmp_path / "run.csv"
    path.write_text(write_csv(rep))
    assert path.read_text().startswith("cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j,alone_i,alone_j\n")
    back = read_csv(path)
    for pair, sample in rep.items():
        assert back[pair].alone_i == pytest.approx(sample.alone_i, rel=1e-6)
        assert back[pair].alone_j == pytest.approx(sample.alone_j, rel=1e-6)
    swapped = tmp_path / "swapped.csv"  # a row naming the higher CPU first: each figure stays with its CPU
    swapped.write_text("cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j,alone_i,alone_j\n1,0,40,0.9,0.8,50,100\n")
    sample = read_csv(swapped)[(0, 1)]
    assert (sample.ratio_i, sample.ratio_j, sample.alone_i, sample.alone_j) == (0.8, 0.9, 100.0, 50.0)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("cpu_i,cpu_j,latency_ns,alone_i\n0,1,40,5\n", "missing column(s) alone_j"),
        ("cpu_i,cpu_j,latency_ns,alone_i,alone_j\n0,1,40,5,inf\n", "`inf` is not a rate alone"),
        ("cpu_i,cpu_j,latency_ns,alone_i,alone_j\n0,1,40,5,1e13\n", "1e13 is not a rate alone"),
    ],
)
def test_bad_rates_alone_are_one_located_error(tmp_path, text, says):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(SpecError) as caught:
        read_csv(path)
    assert says in str(caught.value) and "bad.csv:" in str(caught.value)


# ------------------------------------------------------------------ topologies
def saved(tmp_path: Path, reps: list[dict]) -> list[str]:
    args = []
    for k, rep in enumerate(reps):
        path = tmp_path / f"run{k}.csv"
        path.write_text(write_csv(rep))
        args += ["--load", str(path)]
    return args


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["topology", "probe", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def kind_of_cpu(topo: Topology) -> dict[int, str]:
    return {topo.os_cpu(c): topo.kind_of(c) for c in topo.present_contexts}


@pytest.mark.parametrize(
    ("slow", "domains"),
    [
        (set(range(12, 16)), ["domain_a3"]),  # one whole domain
        (set(range(10, 16)), ["domain_a2.cpu2", "domain_a2.cpu3", "domain_a3"]),  # part of one
    ],
)
def test_the_written_topology_validates_and_has_the_kinds(capsys, tmp_path, slow, domains):
    reps = runs(hybrid(slow, n=16), clusters, 0.03, seed=7)
    out = tmp_path / "proposed.yaml"
    code, stdout, _ = run_cli(capsys, *saved(tmp_path, reps), "--write-topology", out, "--clock", "3GHz", "--json")
    assert code == 0
    assert json.loads(stdout)["proposed_topology"]["kinds"]["kind_b"]["domains"] == domains
    assert main(["validate", str(out)]) == 0
    topo = load_topology(out)
    assert list(topo.kinds) == ["kind_a", "kind_b"] and topo.kinds["kind_a"].domains is None
    assert topo.kinds["kind_b"].domains == domains
    assert topo.kinds["kind_b"].speed == pytest.approx(SLOW, abs=SLOW * speed_tolerance(0.03, 16, 3))
    assert kind_of_cpu(topo) == {c: "kind_b" if c in slow else "kind_a" for c in range(16)}
    assert "kinds of core from the compute loop" in out.read_text()


def test_a_homogeneous_host_writes_no_kinds(capsys, tmp_path):
    reps = runs(hybrid(set(), n=16), clusters, 0.08, seed=8, offsets=0.03, outliers=0.05)
    out = tmp_path / "proposed.yaml"
    code, stdout, _ = run_cli(capsys, *saved(tmp_path, reps), "--write-topology", out)
    assert code == 0 and "kinds of core" not in stdout
    assert load_topology(out).kinds is None


def four_by_four(**extra) -> Topology:
    data = {"name": "c4x4", "clock": "2GHz", "levels": [{"name": "cluster", "count": 4}, {"name": "cpu", "count": 4}]}
    return Topology.model_validate({**data, **extra})


def test_the_output_topology_gets_the_kinds_where_every_usable_cpu_was_probed(capsys, tmp_path):
    slow = {4, 5, 6, 7, 15}
    reps = runs(hybrid(slow, n=16), clusters, 0.03, seed=9)
    source = tmp_path / "c4x4.yaml"
    source.write_text("name: c4x4\nclock: 2GHz\nlevels:\n  - {name: cluster, count: 4}\n  - {name: cpu, count: 4}\n")
    out = tmp_path / "measured.yaml"
    code, _, _ = run_cli(capsys, *saved(tmp_path, reps), "--topology", source, "--output", out)
    assert code == 0 and main(["validate", str(out)]) == 0
    topo = load_topology(out)
    assert topo.kinds["kind_b"].domains == ["cluster1", "cluster3.cpu3"]
    assert kind_of_cpu(topo) == {c: "kind_b" if c in slow else "kind_a" for c in range(16)}
    # twelve of the sixteen CPUs probed: the other four's kind is unknown, so no kinds are written
    partial = analyse([{p: s for p, s in rep.items() if max(p) < 12} for rep in reps], four_by_four())
    assert partial.kinds.several
    written, notes = with_costs(four_by_four(), partial)
    assert written.kinds is None and any("CPUs 12-15 were not probed" in n for n in notes)
    # ... unless those four are outside the topology's usable CPUs
    usable = four_by_four(usable=["cluster0", "cluster1", "cluster2"])
    written, _ = with_costs(usable, partial)
    assert written.kinds["kind_b"].domains == ["cluster1"]


def test_the_probes_median_rates_are_the_cpus_medians():
    reps = runs(hybrid({3}, n=6), flat, 0.05, seed=11)
    kinds = tell_kinds(reps)
    for cpu in range(6):
        mine = [s.alone_i if p[0] == cpu else s.alone_j for rep in reps for p, s in rep.items() if cpu in p]
        assert kinds.rates[cpu] == statistics.median(mine)
