"""The pinning policies (`solver.binding.policies`): compact, compact-cores, scatter and distrib
checked by brute force on small trees and against the tools' documented outputs, every plan of
every built-in example either within the spec's constraints or reported infeasible, and the rows
and the gain over the best policy through `tasksolve solve`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tasksolve.solver.binding.policies import (
    PINNED,
    compact,
    compact_cores,
    distrib,
    distrib_sets,
    gain_over_policies,
    policy_plan,
    scatter,
)
from tasksolve.solver.binding.report import Row
from tasksolve.solver.cli import main
from tasksolve.specs import Plan, Topology, builtin_names, load_spec
from tasksolve.specs.objective import Objective
from tasksolve.specs.plan import check_plan


def tree(*levels: tuple[str, int], os_cpus: dict[str, int] | None = None) -> Topology:
    data = {"name": "t", "clock": "1GHz", "levels": [{"name": n, "count": c} for n, c in levels]}
    if os_cpus:
        data["os_cpus"] = os_cpus
    return Topology.model_validate(data)


SMALL = tree(("socket", 2), ("core", 3), ("smt", 2))  # 12 contexts, context c = socket c//6, core c//2


def counts(topology: Topology, plan: list[int], level: int) -> Counter:
    return Counter(c // topology.strides[level] for c in plan)


@pytest.mark.parametrize("n", range(1, 13))
def test_compact_fills_every_smt_sibling_of_a_core_before_the_next_core(n):
    plan = compact(SMALL, range(12), n)
    assert plan == sorted(plan) and len(set(plan)) == n
    per_core = counts(SMALL, plan, 1)
    cores = sorted(per_core)
    assert cores == list(range(len(cores)))  # the first cores, in depth-first order
    assert all(per_core[c] == 2 for c in cores[:-1])  # every core but the last used is full


@pytest.mark.parametrize("n", range(1, 13))
def test_compact_cores_puts_one_thread_per_core_before_any_second_context(n):
    plan = compact_cores(SMALL, range(12), n)
    per_core = counts(SMALL, plan, 1)
    assert len(set(plan)) == n
    if n <= 6:
        assert sorted(per_core) == list(range(n)) and set(per_core.values()) == {1}
    else:
        assert len(per_core) == 6 and sum(v == 2 for v in per_core.values()) == n - 6


def test_compact_cores_finds_the_core_level_by_name_or_as_the_contexts_parent():
    t2 = tree(("core", 2), ("pipe", 2), ("strand", 2))  # the T2's shape: a core's 4 strands share it
    assert compact_cores(t2, range(8), 3) == [0, 4, 1]
    unnamed = tree(("package", 2), ("l2", 2), ("pu", 2))
    assert compact_cores(unnamed, range(8), 4) == [0, 2, 4, 6]


@pytest.mark.parametrize("n", range(2, 13))
def test_scatter_puts_consecutive_threads_on_different_sockets_and_balances_every_level(n):
    plan = scatter(SMALL, range(12), n)
    sockets = [c // 6 for c in plan]
    assert all(a != b for a, b in zip(sockets, sockets[1:]))
    for k in range(n + 1):  # every prefix is as spread as the tree allows, at every level
        for level in range(2):
            per = counts(SMALL, plan[:k], level)
            domains = [per.get(d, 0) for d in range(SMALL.domain_count(level))]
            if level == 1:  # siblings: the cores of one socket
                for s in range(2):
                    mine = domains[3 * s : 3 * s + 3]
                    assert max(mine) - min(mine) <= 1
            else:
                assert max(domains) - min(domains) <= 1


def test_scatter_reproduces_likwid_pin_s_documented_scatter_list():
    """likwid-pin.md, "Scatter expression": sockets S0 = 0,4,1,5 and S1 = 2,6,3,7 (two SMT threads
    per core) give ``-c S:scatter`` = 0,2,1,3,4,6,5,7; compact is ``-c E:N:8`` over the node
    domain 0,4,1,5,2,6,3,7 and one thread per core ``E:N:2:1:2`` = 0,1."""
    os_cpus = {}
    for index, cpu in enumerate([0, 4, 1, 5, 2, 6, 3, 7]):
        os_cpus[f"socket{index // 4}.core{index // 2 % 2}.smt{index % 2}"] = cpu
    topology = tree(("socket", 2), ("core", 2), ("smt", 2), os_cpus=os_cpus)
    cpus = topology.os_cpu_list
    assert [cpus[c] for c in scatter(topology, range(8), 8)] == [0, 2, 1, 3, 4, 6, 5, 7]
    assert [cpus[c] for c in compact(topology, range(8), 8)] == [0, 4, 1, 5, 2, 6, 3, 7]
    assert [cpus[c] for c in compact_cores(topology, range(8), 2)] == [0, 1]


def masks(topology: Topology, sets: list[list[int]]) -> list[int]:
    return [sum(1 << topology.os_cpu(c) for c in s) for s in sets]


def test_distrib_matches_hwloc_distrib_s_documented_outputs():
    """hwloc-users, March 2014: ``hwloc-distrib -i "4 4" 2`` (4 cores of 4 PUs) gives 0xff and
    0xff00 with the rounding hwloc 1.10 adopted; the hwloc-distrib(1) man page's ``hwloc-distrib 4``
    gives 0x0f, 0xf00, 0xf0, 0xf000 and ``--single`` 0x1, 0x100, 0x10, 0x1000 -- on a machine the
    page does not describe: 2 packages of 2 dies of 4 cores whose OS numbers interleave the
    packages (package 0 holds CPUs 0-3 and 8-11) reproduces both."""
    four = tree(("core", 4), ("pu", 4))
    assert masks(four, distrib_sets(four, range(16), 2)) == [0xFF, 0xFF00]
    assert distrib(four, range(16), 2) == [0, 8]
    os_cpus = {}
    for c in range(16):
        package, die, core = c // 8, c // 4 % 2, c % 4
        os_cpus[f"package{package}.die{die}.core{core}"] = 4 * (2 * die + package) + core
    page = tree(("package", 2), ("die", 2), ("core", 4), os_cpus=os_cpus)
    assert masks(page, distrib_sets(page, range(16), 4)) == [0x0F, 0xF00, 0xF0, 0xF000]
    assert [1 << page.os_cpu(c) for c in distrib(page, range(16), 4)] == [0x1, 0x100, 0x10, 0x1000]


@pytest.mark.parametrize("n", range(1, 25))
def test_distrib_counts_differ_by_at_most_one_among_equal_weight_siblings(n):
    topology = tree(("socket", 2), ("core", 3), ("smt", 4))  # 24 contexts
    plan = distrib(topology, range(24), n)
    assert len(set(plan)) == n
    for level in range(3):
        per = counts(topology, plan, level)
        width = topology.counts[level]
        for parent in range(topology.domain_count(level - 1) if level else 1):
            siblings = [per.get(parent * width + j, 0) for j in range(width)]
            assert max(siblings) - min(siblings) <= 1


def test_distrib_divides_by_contexts_on_an_irregular_hybrid_tree():
    """Alder Lake: 8 P-cores of 2 threads, 2 clusters of 4 single-thread E-cores; 12 items over
    24 contexts: each P-core gets 1, each E-cluster 2 -- in proportion to their contexts."""
    topology = load_spec("alderlake-ids").topology
    present = topology.present_contexts
    plan = distrib(topology, present, 12)
    assert set(plan) <= set(present) and len(set(plan)) == 12
    per_cluster = counts(topology, plan, 0)
    assert [per_cluster[k] for k in range(10)] == [1] * 8 + [2, 2]
    for name in ("compact", "compact-cores", "scatter"):
        assert set(policy_plan(load_spec("alderlake-ids"), name).contexts) <= set(present)


BINDING = [n for n in builtin_names("") if load_spec(n).problem == "binding"]


@pytest.mark.parametrize("name", BINDING)
def test_every_policy_plan_keeps_the_spec_s_constraints_or_says_it_is_infeasible(name):
    from tasksolve.simulate.analytic import BatchModel

    spec = load_spec(name)
    batch = BatchModel(spec)
    for policy in PINNED:
        plan = policy_plan(spec, policy, batch)
        if plan.contexts is None:
            assert plan.problem
            continue
        assert check_plan(spec, Plan.from_contexts(spec, plan.contexts)) == []
        assert set(plan.contexts) <= set(spec.usable_contexts)
        bound = spec.constraints.latency_max
        if bound is not None:
            import numpy as np

            latency = batch.evaluate(np.array([plan.contexts])).latency_max[0]
            assert latency <= bound.to_seconds(spec.topology.clock) * (1 + 1e-9)


def test_a_plan_that_breaks_a_cap_is_reported_with_the_constraint_and_pins_are_kept():
    spec = load_spec("t2-constrained")  # pin R#0 on core0.pipe0.strand0, max 3 threads a pipe
    plan = policy_plan(spec, "compact")
    assert plan.contexts is None and "constraints.max_threads.pipe" in plan.problem
    pinned = spec.topology.parse_context("core0.pipe0.strand0")
    for policy in PINNED:
        feasible = policy_plan(spec, policy)
        if feasible.contexts is not None:
            assert feasible.contexts[spec.thread_index["ipfwd#0.R"]] == pinned


def test_the_gain_is_over_the_best_policy_in_the_objective_s_direction_and_ties_are_within_the_noise():
    spec = load_spec("t2-ipfwd-l1-x2")
    rows = [Row("compact", 1.0, 9.0, 0.1, [0]), Row("scatter", 1.0, 10.0, 0.1, [1]), Row("distrib", None, None, None)]
    throughput = Objective.of("total_throughput")

    class Measured:  # the chosen plan's measurement
        half_width = 0.1

        def value(self, objective):
            return 11.0

    gain = gain_over_policies(spec, rows, Measured(), throughput)
    assert gain.best == "scatter" and gain.gain == pytest.approx(0.1) and gain.beyond_noise
    assert gain.infeasible == ["distrib"]
    assert not gain_over_policies(spec, rows, Measured(), throughput, ties=["scatter"]).beyond_noise
    assert gain_over_policies(spec, rows[2:], Measured(), throughput) is None


def solve_json(capsys, *args: str) -> dict:
    code = main(["solve", *args, "--workers", "1", "--random-plans", "200", "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("oracle", ["analytic", "des"])
def test_solve_lists_the_policy_rows_on_the_closed_form_and_the_simulation(capsys, oracle):
    methods = "cpsat,compact,compact-cores,scatter,distrib,os"
    result = solve_json(capsys, "t2-ipfwd-l1-x2", "--method", methods, "--oracle", oracle, "--time-limit", "5")
    rows = {row["method"]: row for row in result["comparison"]}
    for policy in PINNED:
        assert rows[policy]["simulated"] > 0 and rows[policy]["predicted"] > 0
    assert rows["os (unpinned)"]["simulated"] is None and "not measured" in rows["os (unpinned)"]["note"]
    gain = result["policy_gain"]
    best = max(PINNED, key=lambda p: rows[p]["simulated"])
    assert gain["best"] == best and gain["value"] == rows[best]["simulated"]
    chosen = result["simulated"]["throughput"]["total"]
    assert gain["gain"] == pytest.approx(chosen / rows[best]["simulated"] - 1)
    assert gain["gain"] >= -0.02  # CP-SAT's plan, selected on the oracle, is not far below a policy's


def test_policies_alone_answer_with_the_best_of_them_and_gain_nothing(capsys):
    result = solve_json(capsys, "t2-ipfwd-l1-x2", "--method", "compact,scatter,distrib", "--oracle", "des")
    assert result["method"] in ("compact", "scatter", "distrib")
    assert result["policy_gain"]["gain"] == pytest.approx(0.0) and not result["policy_gain"]["beyond_noise"]


def test_policies_alone_all_infeasible_say_why(capsys):
    code = main(["solve", "t2-constrained", "--method", "compact,compact-cores", "--oracle", "analytic"])
    err = capsys.readouterr().err
    assert code != 0 and "compact: infeasible for this spec" in err and "max_threads" in err


TESTBED = Path(__file__).resolve().parents[2] / "bench" / "testbed"


def test_os_is_the_program_unpinned_on_the_command_oracle(tmp_path, capsys):
    """The test bed's program unpinned (its threads where `truth.os_plan` puts them): the os row
    is measured, within its interval of the truth's unpinned rate."""
    sys.path.insert(0, str(TESTBED))
    import truth

    data = yaml.safe_load((TESTBED / "testbed.yaml").read_text())
    command = [sys.executable, str(TESTBED / "program.py"), "--plan", "{plan_file}", "--cv", "0.02"]
    seeded = ["--noise-seed-file", str(tmp_path / "seed")]  # a fixed sequence of draws
    data["oracle"].update(command=command + ["--outliers", "0", "--drift", "0", *seeded], repeats=3, budget=6, warmup=0)
    path = tmp_path / "testbed.yaml"
    path.write_text(yaml.safe_dump(data))
    result = solve_json(capsys, str(path), "--method", "compact,os", "--allow-commands")
    row = next(r for r in result["comparison"] if r["method"] == "os (unpinned)")
    assert row["note"].startswith("TASKSOLVE_PINNING=none")
    assert abs(row["simulated"] - truth.unpinned_rate()) <= 3 * max(row["half_width"], 0.02 * row["simulated"])


def test_run_carries_the_policy_rows_and_the_gain_to_the_certificate_and_the_report(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "t2-ipfwd-intadd-x2", "--out", str(out), "--samples", "100", "--oracle", "analytic"]
    args += ["--method", "cpsat,compact,scatter,distrib", "--time-limit", "10", "--workers", "1", "--json"]
    main([*args, "--design", "random", "--deterministic"])
    result = json.loads(capsys.readouterr().out)
    rows = {row["method"] for row in result["solve"]["comparison"]}
    assert {"compact", "scatter", "distrib"} <= rows
    gain = json.loads((out / "certificate.json").read_text())["solve"]["policy_gain"]
    assert gain == result["solve"]["policy_gain"] and gain["best"] in ("compact", "scatter", "distrib")
    assert "over the best pinning policy" in (out / "report.html").read_text()
