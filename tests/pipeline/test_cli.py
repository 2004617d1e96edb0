"""`tasksolve pipeline` end to end."""

from __future__ import annotations

import json

import pytest

from tasksolve.solver.cli import main
from tasksolve.solver.pipeline.plans import pipeline_problems
from tasksolve.specs import load_plan, load_spec
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
            assert row["throughput"] <= data["throughput"] * (1 + 1e-12)  # nobody beats the optimum
    spec = load_spec("xeon-lata-dag")
    plan = load_plan(target, spec)
    assert plan.method == "cpsat" and plan.spec_file == "xeon-lata-dag"  # the file records where its spec is
    assert plan.model_copy(update={"spec_file": None}).to_dict() == data["plan"]
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
    path.write_text(
        spec_text(
            {"a": 10, "b": 40, "c": 40, "d": 5},
            [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
            communication={"pair": 1, "machine": 3},
            latency_max=latency_max,
        )
    )
    return path


def test_infeasible_bound_names_the_minimum(capsys, tmp_path):
    from tasksolve.solver.pipeline.brute import brute_force
    from tasksolve.solver.pipeline.problem import PipelineProblem

    path = diamond(tmp_path)
    p = PipelineProblem.from_spec(load_spec(str(path)), latency_max=None)
    assert p.critical_path == 55
    minimum = min(ev.latency for ev in _latencies(p))  # over every candidate (replicas never help latency)
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
    from tasksolve.solver.pipeline.brute import context_assignments, set_partitions
    from tasksolve.solver.pipeline.candidates import Candidate, Group, group_order
    from tasksolve.solver.pipeline.evaluation import evaluate

    for parts in set_partitions(p.n):
        base = Candidate(tuple(Group(tuple(x)) for x in parts))
        if len(parts) <= p.n_contexts and group_order(p, base) is not None:
            for ctx in context_assignments((1,) * len(parts), p.contexts):
                yield evaluate(p, base.with_contexts(ctx))


def test_bound_below_the_critical_path(capsys, tmp_path):
    code, out, err = run(capsys, str(diamond(tmp_path, latency_max=54)), *FAST)  # the spec's bound
    assert code == 2 and out == ""  # refused, located, when the spec loads
    assert "diamond.yaml:" in err and "constraints.latency_max: latency_max 54 cycles is below" in err
    assert "critical path of `g` (a -> b -> d) takes 55 cycles" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (("--method", "fastest"), "unknown method `fastest`"),
        (("--latency-max", "soon"), "--latency-max"),
        (("--cores", "0"), "--cores must be at least 1"),
        (("--cores", "99"), "only 8 usable contexts"),
        (("--sweep-latency", "90%:60%"), "--sweep-latency"),
        (("--plot", "x.png"), "--plot needs a sweep"),
        (("--app", "nope"), "unknown application `nope`"),
    ],
)
def test_bad_options_exit_2_with_one_line(capsys, args, message):
    code, _, err = run(capsys, "xeon-lata-dag", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_missed_but_achievable_bound_exits_1(capsys, tmp_path):
    # random pipelines ignore the bound; with only that method the answer can be negative
    spec = tmp_path / "s.yaml"
    spec.write_text(
        spec_text(
            {"a": 10, "b": 10, "c": 10},
            [("a", "b", 64), ("b", "c", 64)],
            levels=[{"name": "cpu", "count": 3}],
            communication={"machine": 50},
            latency_max=30,
        )
    )
    code, out, err = run(capsys, str(spec), "--method", "random", "--seed", "1", "--json", *FAST)
    data = json.loads(out)
    assert code == (0 if data["meets_bound"] else 1)
    code2, _, err2 = run(capsys, str(spec), "--method", "random", "--seed", "1", *FAST)
    assert code2 == code and ("misses the latency bound" in err2) == (code == 1)


def test_sweeps_print_and_plot(capsys, tmp_path):
    target = tmp_path / "fig.png"
    code, out, err = run(
        capsys,
        str(diamond(tmp_path)),
        "--method",
        "lata,cpsat,parallel",
        "--sweep-latency",
        "60%:100%:10%",
        "--cores",
        "2:4:2",
        "--plot",
        str(target),
        "--json",
        *FAST,
    )
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
    from tasksolve.solver.pipeline.problem import PipelineProblem

    p = PipelineProblem.from_spec(load_spec(str(diamond(tmp_path))), latency_max=None)
    minimum = min(ev.latency for ev in _latencies(p))
    cp = latency["cpsat"]
    fractions = [0.6, 0.7, 0.8, 0.9, 1.0]
    kept = [f for f in fractions if int(f * p.sequential) >= p.critical_path]  # others are skipped
    assert [q["x"] for q in cp] == kept
    assert [q["status"] for q in cp] == ["OPTIMAL" if int(f * p.sequential) >= minimum else "INFEASIBLE" for f in kept]
    assert "INFEASIBLE" in [q["status"] for q in cp]
    assert all(q["throughput"] is None for q in cp if q["status"] == "INFEASIBLE")
    for m in ("lata", "parallel"):
        latency[m] = [q for q, c in zip(latency[m], latency["cpsat"], strict=True) if c["status"] == "OPTIMAL"]
    cp = [q for q in cp if q["status"] == "OPTIMAL"]
    # a looser bound never lowers the optimal throughput; the optimum beats every plan meeting the bound
    assert all(a["throughput"] <= b["throughput"] * (1 + 1e-12) for a, b in zip(cp, cp[1:], strict=False))
    for m in ("lata", "parallel"):
        for mine, best in zip(latency[m], cp, strict=True):
            assert not mine["feasible"] or mine["throughput"] <= best["throughput"] * (1 + 1e-12)
    assert latency["parallel"][-1]["feasible"] and not latency["parallel"][0]["feasible"]
    cores = [p for p in data["sweep"] if p["kind"] == "cores" and p["method"] == "cpsat"]
    assert [p["x"] for p in cores] == [2, 4] and cores[0]["throughput"] <= cores[1]["throughput"]
    code, out, err = run(capsys, str(diamond(tmp_path)), "--method", "lata", "--sweep-latency", "90%:100%", *FAST)
    assert code == 0 and "L0" in out and "misses the latency bound" in out


def test_cores_option_limits_the_threads(capsys):
    code, out, err = run(
        capsys, "t2-npire-router", "--cores", "6", "--latency-max", "none", "--method", "lata,list", "--json", *FAST
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["contexts"] == 6
    assert all(row["threads"] <= 6 for row in data["comparison"])
    assert len(data["plan"]["bindings"]) <= 6


# ------------------------------------------------------------------ options, output, progress, errors
CHAIN = {"a": 10, "b": 30, "c": 20}


def chain(tmp_path):
    path = tmp_path / "chain.yaml"
    path.write_text(spec_text(CHAIN, [("a", "b", 64), ("b", "c", 64)], communication={"pair": 1, "machine": 3}))
    return path


@pytest.mark.parametrize("flag", ["--method", "--methods", "-m"])
def test_method_option_spellings(capsys, tmp_path, flag):
    code, out, err = run(capsys, str(chain(tmp_path)), flag, "lata,list", "--json", *FAST)
    assert code == 0, err
    assert [row["method"] for row in json.loads(out)["comparison"]] == ["lata", "list"]


def test_seed_must_not_be_negative_and_workers_zero_means_every_core(capsys, tmp_path):
    code, out, err = run(capsys, str(chain(tmp_path)), "--seed", "-1", "--method", "lata")
    assert code == 2 and out == "" and "--seed" in err and "Traceback" not in err
    code, out, err = run(
        capsys,
        str(chain(tmp_path)),
        "--method",
        "lata,cpsat",
        "--json",
        "--time-limit",
        "5",
        "--workers",
        "0",
        "--oracle",
        "none",
    )
    assert code == 0, err
    assert json.loads(out)["method"] == "cpsat"


def test_out_is_a_directory_with_plan_yaml(capsys, tmp_path):
    target = tmp_path / "results" / "run1"
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata", "-o", str(target), *FAST)
    assert code == 0, err
    assert (target / "plan.yaml").is_file() and f"plan written to {target / 'plan.yaml'}" in out
    spec = load_spec(str(chain(tmp_path)))
    assert load_plan(target / "plan.yaml", spec).method == "lata"


def test_out_naming_a_file_is_bad_input(capsys, tmp_path):
    existing = tmp_path / "plan.yaml"
    existing.write_text("x\n")
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata", "--out", str(existing), *FAST)
    assert code == 2 and out == ""
    assert str(existing) in err and "not a directory" in err and len(err.strip().splitlines()) == 1
    assert existing.read_text() == "x\n"


def test_sweep_plots_go_into_the_out_directory(capsys, tmp_path):
    target = tmp_path / "figs"
    code, out, err = run(
        capsys,
        str(diamond(tmp_path)),
        "--method",
        "lata",
        "--sweep-latency",
        "90%:100%",
        "--out",
        str(target),
        "--json",
        *FAST,
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["plots"] == [str(target / "sweep-latency.png")]
    assert (target / "sweep-latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def terminal(monkeypatch):
    """stderr seen as a terminal, so that the progress bar is drawn (captured by capsys)."""
    from rich.console import Console

    from tasksolve.solver.cli import common

    monkeypatch.setenv("TERM", "xterm")  # rich draws nothing on a dumb terminal
    monkeypatch.setattr(common, "err_console", Console(stderr=True, highlight=False, force_terminal=True))


def test_progress_goes_to_stderr_only(capsys, tmp_path, terminal):
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata,cpsat", *FAST)
    assert code == 0, err
    assert "cpsat (CP-SAT, up to 20 s)" in err and "measuring the cpsat plan (analytic)" in err
    assert "CP-SAT, up to" not in out and "measuring" not in out
    assert "comparison" in out


def test_sweep_progress_counts_points(capsys, tmp_path, terminal):
    code, out, err = run(
        capsys, str(diamond(tmp_path)), "--method", "lata,parallel", "--sweep-latency", "90%:100%", *FAST
    )
    assert code == 0, err
    assert "L0 = 90%: lata" in err and "L0 = 100%: parallel" in err and "5/6" in err  # 3 bounds x 2 methods
    assert "L0 = 90%: lata" not in out


def test_no_progress_with_json(capsys, tmp_path, terminal):
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata,cpsat", "--json", *FAST)
    assert code == 0 and err == ""
    json.loads(out)


def test_a_failing_solver_exits_3_without_traceback(capsys, tmp_path, monkeypatch):
    from tasksolve.solver.errors import SolverFailed
    from tasksolve.solver.pipeline import cpsat

    def broken(*args, **kwargs):
        raise SolverFailed("CP-SAT stopped: out of workers")

    monkeypatch.setattr(cpsat, "solve", broken)
    for extra in ((), ("--json",)):
        code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata,cpsat", *extra, *FAST)
        assert code == 3 and "CP-SAT stopped: out of workers" in err
        assert "Traceback" not in err and "internal error" not in err
        if extra:
            assert json.loads(out)["error"]["exit_code"] == 3


def test_an_invalid_cpsat_model_is_a_solver_failure_not_a_row(capsys, tmp_path, monkeypatch):
    from dataclasses import replace

    from tasksolve.solver.pipeline import cpsat

    real = cpsat.solve
    monkeypatch.setattr(cpsat, "solve", lambda *a, **k: replace(real(*a, **k), status="MODEL_INVALID"))
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata,cpsat", "--json", *FAST)
    assert code == 3 and "MODEL_INVALID" in err and "Traceback" not in err


def test_a_failing_oracle_is_reported_in_notes(capsys, tmp_path, monkeypatch):
    from tasksolve.simulate.errors import OracleError
    from tasksolve.solver.pipeline.compare import Measurer

    def failing(self, plan):
        raise OracleError("the simulation diverged")

    monkeypatch.setattr(Measurer, "measure", failing)
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata,list", "--json", *FAST)
    assert code == 0, err
    data = json.loads(out)
    assert all(row["simulated"] is None for row in data["comparison"])
    assert [n for n in data["notes"] if "the simulation diverged" in n and n.startswith("lata:")]
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata", *FAST)
    assert code == 0 and "note: lata: not measured: the closed form failed: the simulation diverged" in out


def test_a_bug_in_the_oracle_is_not_hidden(capsys, tmp_path, monkeypatch):
    from tasksolve.solver.pipeline.compare import Measurer

    def buggy(self, plan):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(Measurer, "measure", buggy)
    code, out, err = run(capsys, str(chain(tmp_path)), "--method", "lata", *FAST)
    assert code == 70 and "internal error" in err and "ZeroDivisionError" in err and "Traceback" not in err


def test_split_scores_the_best_heuristic_under_the_bound_and_keeps_the_spec_when_no_split_helps(capsys, tmp_path):
    """`--split` (NPIRE §2.5) scores a graph by the best heuristic plan meeting the bound; on 8
    contexts without a bound that is the fully replicated router, which no split improves (a
    split adds a message and frees no replica), so the graph and the spec stay as they are."""
    out_dir = tmp_path / "out"
    code, out, err = run(
        capsys, "t2-npire-router", "--cores", "8", "--latency-max", "none", "--split", "--json", "--out", str(out_dir),
        "--time-limit", "5", "--workers", "1", "--oracle", "none",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    rows = {row["method"]: row["throughput"] for row in data["comparison"]}
    assert data["splits"] == [{"split": None, "value": pytest.approx(max(v for m, v in rows.items() if m != "cpsat"))}]
    assert not (out_dir / "spec.yaml").exists()
    assert len(data["plan"]["threads"]) == 8


def test_split_keeps_a_split_that_raises_the_score(monkeypatch, tmp_path):
    """The feedback loop keeps a split only when the score rises, and `--out` then holds the
    split spec the plan refers to."""
    from tasksolve.solver.pipeline import npire

    def fake_search(spec, evaluate, app=None, **_):
        split = npire.split_spec(spec, {"route": 2}, app)
        return split, [{"split": None, "value": 1.0}, {"split": "route", "value": 2.0}]

    monkeypatch.setattr(npire, "split_search", fake_search)
    out_dir = tmp_path / "out"
    code = main(["pipeline", "t2-npire-router", "--cores", "8", "--latency-max", "none", "--split", "--out",
                 str(out_dir), "--time-limit", "5", "--workers", "1", "--oracle", "none"])  # fmt: skip
    assert code == 0
    spec = load_spec(str(out_dir / "spec.yaml"))
    assert {"route_s1", "route_s2"} <= set(spec.applications["router"].tasks)
    plan = load_plan(out_dir / "plan.yaml", spec)
    assert pipeline_problems(spec, plan) == []
