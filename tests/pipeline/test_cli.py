"""`tasksolve pipeline` end to end."""

from __future__ import annotations

import json

import pytest

from solver.cli import main
from specs import load_plan, load_spec
from solver.pipeline.plans import pipeline_problems
from tests.pipeline.helpers import spec_text


def run(capsys, *args):
    code = main(["pipeline", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


FAST = ("--time-limit", "20", "--workers", "1", "--oracle", "analytic")


def test_json_result_with_comparison_and_plan(capsys, tmp_path):
    target = tmp_path / "out" / "plan.yaml"
    code, out, err = run(capsys, "xeon-lata-dag", "--latency-max", "100%", "--json", "--out", str(target.parent), *FAST)
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "cpsat" and data["status"] == "OPTIMAL" and data["gap"] == 0
    assert data["latency_max_cycles"] == pytest.approx(data["sequential_cycles"])
    assert data["latency"] <= data["latency_max"] and data["meets_bound"]
    assert data["bound"]["throughput"] == pytest.approx(data["throughput"])
    methods = [row["method"] for row in data["comparison"]]
    assert methods == ["cpsat", "lata", "parallel", "list", "greedy", "random", "bipar"]
    for row in data["comparison"]:
        assert {"method", "latency", "throughput", "simulated"} <= set(row)
        assert row["simulated"]["oracle"] == "analytic"
        if row["meets_bound"]:
            assert row["throughput"] <= data["throughput"] * (1 + 1e-12)   # nobody beats the optimum
    spec = load_spec("xeon-lata-dag")
    plan = load_plan(target, spec)
    assert plan.method == "cpsat" and plan.to_dict() == data["plan"]
    assert pipeline_problems(spec, plan) == []


def test_text_output_has_the_stage_diagram_and_table(capsys):
    code, out, err = run(capsys, "xeon-lata-dag", "--method", "lata,random", "--trace", "--seed", "3", *FAST)
    assert code == 0, err
    assert "s0 | rx -> parse" in out
    assert "comparison" in out and "random" in out
    assert "LATA steps:" in out and "levels" in out


def diamond(tmp_path, latency_max=None):
    """a -> (b | c) -> d on a 2x2 machine where sharing a pair is cheap."""
    path = tmp_path / "diamond.yaml"
    path.write_text(spec_text({"a": 10, "b": 40, "c": 40, "d": 5},
                              [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
                              communication={"pair": 1, "machine": 3}, latency_max=latency_max))
    return path


def test_infeasible_bound_names_the_minimum(capsys, tmp_path):
    from solver.pipeline.brute import brute_force
    from solver.pipeline.problem import PipelineProblem

    path = diamond(tmp_path)
    p = PipelineProblem.from_spec(load_spec(str(path)), latency_max=None)
    assert p.critical_path == 55
    minimum = min(ev.latency for ev in _latencies(p))   # over every candidate (replicas never help latency)
    assert p.critical_path < minimum < p.sequential
    truth, _, _ = brute_force(p.with_bound(minimum - 1))
    assert not truth.feasible
    code, out, err = run(capsys, str(path), "--latency-max", str(minimum - 1), *FAST)
    assert code == 2 and out == ""
    assert f"latency bound {minimum - 1} cycles ({minimum - 1}ns) cannot be met" in err
    assert f"minimum achievable latency is {minimum} cycles" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, str(path), "--latency-max", str(minimum), "--json", *FAST)
    assert code == 0 and json.loads(out)["latency"] * 1e9 == pytest.approx(minimum)


def _latencies(p):
    from solver.pipeline.brute import context_assignments, set_partitions
    from solver.pipeline.problem import Candidate, Group, evaluate, group_order

    for parts in set_partitions(p.n):
        base = Candidate(tuple(Group(tuple(x)) for x in parts))
        if len(parts) <= p.n_contexts and group_order(p, base) is not None:
            for ctx in context_assignments((1,) * len(parts), p.contexts):
                yield evaluate(p, base.with_contexts(ctx))


def test_bound_below_the_critical_path(capsys, tmp_path):
    code, out, err = run(capsys, str(diamond(tmp_path, latency_max=54)), *FAST)   # the spec's bound
    assert code == 2 and out == ""
    assert "latency bound 54 cycles (54ns) cannot be met: it is below the critical path of 55 cycles" in err


@pytest.mark.parametrize("args, message", [
    (("--method", "fastest"), "unknown method `fastest`"),
    (("--latency-max", "soon"), "--latency-max"),
    (("--cores", "0"), "--cores must be at least 1"),
    (("--cores", "99"), "only 8 usable contexts"),
    (("--sweep-latency", "90%:60%"), "--sweep-latency"),
    (("--plot", "x.png"), "--plot needs a sweep"),
    (("--app", "nope"), "unknown application `nope`"),
])
def test_bad_options_exit_2_with_one_line(capsys, args, message):
    code, _, err = run(capsys, "xeon-lata-dag", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_missed_but_achievable_bound_exits_1(capsys, tmp_path):
    # random pipelines ignore the bound; with only that method the answer can be negative
    spec = tmp_path / "s.yaml"
    spec.write_text(spec_text({"a": 10, "b": 10, "c": 10}, [("a", "b", 64), ("b", "c", 64)],
                              levels=[{"name": "cpu", "count": 3}], communication={"machine": 50},
                              latency_max=30))
    code, out, err = run(capsys, str(spec), "--method", "random", "--seed", "1", "--json", *FAST)
    data = json.loads(out)
    assert code == (0 if data["meets_bound"] else 1)
    code2, _, err2 = run(capsys, str(spec), "--method", "random", "--seed", "1", *FAST)
    assert code2 == code and ("misses the latency bound" in err2) == (code == 1)


def test_sweeps_print_and_plot(capsys, tmp_path):
    target = tmp_path / "fig.png"
    code, out, err = run(capsys, str(diamond(tmp_path)), "--method", "lata,cpsat,parallel",
                         "--sweep-latency", "60%:100%:10%", "--cores", "2:4:2", "--plot", str(target), "--json", *FAST)
    assert code == 0, err
    data = json.loads(out)
    kinds = {p["kind"] for p in data["sweep"]}
    assert kinds == {"latency", "cores"}
    assert sorted(data["plots"]) == sorted([str(tmp_path / "fig-cores.png"), str(tmp_path / "fig-latency.png")])
    for path in data["plots"]:
        assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    latency = {}
    for p in data["sweep"]:
        if p["kind"] == "latency":
            latency.setdefault(p["method"], []).append(p)
    from solver.pipeline.problem import PipelineProblem

    p = PipelineProblem.from_spec(load_spec(str(diamond(tmp_path))), latency_max=None)
    minimum = min(ev.latency for ev in _latencies(p))
    cp = latency["cpsat"]
    fractions = [0.6, 0.7, 0.8, 0.9, 1.0]
    kept = [f for f in fractions if int(f * p.sequential) >= p.critical_path]   # others are skipped
    assert [q["x"] for q in cp] == kept
    assert [q["status"] for q in cp] == ["OPTIMAL" if int(f * p.sequential) >= minimum else "INFEASIBLE" for f in kept]
    assert "INFEASIBLE" in [q["status"] for q in cp]
    assert all(q["throughput"] is None for q in cp if q["status"] == "INFEASIBLE")
    for m in ("lata", "parallel"):
        latency[m] = [q for q, c in zip(latency[m], latency["cpsat"]) if c["status"] == "OPTIMAL"]
    cp = [q for q in cp if q["status"] == "OPTIMAL"]
    # a looser bound never lowers the optimal throughput; the optimum beats every plan meeting the bound
    assert all(a["throughput"] <= b["throughput"] * (1 + 1e-12) for a, b in zip(cp, cp[1:]))
    for m in ("lata", "parallel"):
        for mine, best in zip(latency[m], cp):
            assert not mine["feasible"] or mine["throughput"] <= best["throughput"] * (1 + 1e-12)
    assert latency["parallel"][-1]["feasible"] and not latency["parallel"][0]["feasible"]
    cores = [p for p in data["sweep"] if p["kind"] == "cores" and p["method"] == "cpsat"]
    assert [p["x"] for p in cores] == [2, 4] and cores[0]["throughput"] <= cores[1]["throughput"]
    code, out, err = run(capsys, str(diamond(tmp_path)), "--method", "lata", "--sweep-latency", "90%:100%", *FAST)
    assert code == 0 and "L0" in out and "misses the latency bound" in out


def test_cores_option_limits_the_threads(capsys):
    code, out, err = run(capsys, "t2-npire-router", "--cores", "6", "--latency-max", "none", "--method", "lata,list",
                         "--json", *FAST)
    assert code == 0, err
    data = json.loads(out)
    assert data["contexts"] == 6
    assert all(row["threads"] <= 6 for row in data["comparison"])
    assert len(data["plan"]["bindings"]) <= 6
