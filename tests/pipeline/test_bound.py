"""The pipeline relaxation's bound against brute force on the analytic oracle and, without contention, on the
simulation (`solver.pipeline.bound`)."""

import dataclasses

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import evaluate as analytic
from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.pipeline.bound import closed_form_bound, exact_demands, refusal, simulation_bound
from tasksolve.solver.pipeline.brute import every_candidate
from tasksolve.solver.pipeline.candidates import check_candidate
from tasksolve.solver.pipeline.compare import spec_for_problem
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.plans import to_plan
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs import load_spec_text
from tests.pipeline.helpers import dags, make_spec, spec_text

PORT = [{"name": "port", "level": "pair", "capacity": 1.0}, {"name": "bus", "level": "machine", "capacity": 1.5}]


def best_on_the_oracle(spec, p: PipelineProblem) -> float:
    """The best analytic-oracle throughput over every plan the closed form puts within the bound:
    every grouping, replica count and ordered context assignment (brute force's space)."""
    alone = spec_for_problem(spec, p)
    best = 0.0
    for mapped in every_candidate(p):
        if check_candidate(p, mapped) or not evaluate(p, mapped).feasible:
            continue
        best = max(best, analytic(alone, to_plan(p, mapped, "x")).throughput)
    return best


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag=dags(max_tasks=4, max_work=80), data=st.data())
def test_the_bound_is_never_below_the_best_plan_on_the_analytic_oracle(dag, data):
    """Random 2-4 task DAGs on 3-4 contexts of a 2x2 machine, messages cheaper inside a pair,
    contention on a per-pair port and a machine bus, with and without a latency bound: the
    relaxation's bound is at least the best plan's analytic throughput (brute force).  How tight it
    is is the study's (bench/pipeline_truth.py): on tasks of a few cycles a message is most of a
    thread's time, and the closest pair's cost can halve it."""
    tasks, edges = dag
    inner = data.draw(st.integers(0, 20))
    outer = inner + data.draw(st.integers(0, 60))
    shares = st.sampled_from([0.0, 0.3, 0.55, 0.9])
    demand = {t: {"port": data.draw(shares), "bus": data.draw(shares)} for t in tasks}
    contexts = data.draw(st.sampled_from([None, ["pair0", "pair1.core0"]]))
    spec = make_spec(
        tasks, edges, communication={"pair": inner, "machine": outer}, resources=PORT, demand=demand, contexts=contexts
    )
    p = PipelineProblem.from_spec(spec, latency_max=None)
    slack = data.draw(st.one_of(st.none(), st.integers(0, p.sequential + 2 * outer)))
    if slack is not None:
        p = p.with_bound(p.critical_path + slack)
    bound, why = closed_form_bound(p, time_limit=20, exact=exact_demands(spec, p))
    best = best_on_the_oracle(spec, p)
    if best == 0.0:  # no plan meets the bound: a bound may or may not exist, nothing to check
        return
    assert why is None and bound is not None and bound.status == "OPTIMAL"
    assert bound.value >= best * (1 - 1e-12)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag=dags(max_tasks=4, max_work=80), data=st.data())
def test_the_bound_without_contention_is_never_below_a_simulated_plan(dag, data):
    """The same random DAGs, random or fixed work: every plan within the latency bound simulated
    (its figure minus its half-width) is at most the contention-free relaxation's bound, and with
    a shared queue no bound is claimed."""
    tasks, edges = dag
    inner = data.draw(st.integers(0, 20))
    outer = inner + data.draw(st.integers(0, 60))
    demand = {t: {"port": data.draw(st.sampled_from([0.0, 0.55, 0.9])), "bus": 0.6} for t in tasks}
    data_ = yaml.safe_load(
        spec_text(tasks, edges, communication={"pair": inner, "machine": outer}, resources=PORT, demand=demand)
    )
    data_["oracle"] = {"service": {"distribution": data.draw(st.sampled_from(["deterministic", "exponential"]))}}
    spec = load_spec_text(yaml.safe_dump(data_), "<dag>")
    p = PipelineProblem.from_spec(spec, latency_max=None)
    if data.draw(st.booleans()):
        p = p.with_bound(p.critical_path + data.draw(st.integers(0, p.sequential)))
    alone = spec_for_problem(spec, p)
    oracle = SimulationOracle(alone, packets=3000, warmup=300, precision=0.02, time_cap=20.0)
    bound, why = simulation_bound(p, oracle.settings, time_limit=20)
    plans = [m for m in every_candidate(p) if not check_candidate(p, m) and evaluate(p, m).feasible]
    if not plans:
        return
    assert why is None and bound is not None and bound.oracle == "des"
    for k, mapped in enumerate(plans[:: max(1, len(plans) // 40)]):
        m = oracle.evaluate(to_plan(p, mapped, "x"), seed=k)
        assert m.throughput - (m.half_width or 0.0) <= bound.value * (1 + 1e-12)
    shared = dataclasses.replace(DesSettings.from_spec(alone), shared_queue=True)
    assert simulation_bound(p, shared, time_limit=5)[0] is None


def test_the_bound_is_refused_where_its_argument_fails():
    """Messages dearer inside a pair than across (the closest pair is not the cheapest), and
    demands that are not thousandths: no bound, and the reason says why."""
    tasks, edges = {"a": 50, "b": 40}, [("a", "b", 64)]
    rising = make_spec(tasks, edges, communication={"pair": 30, "machine": 5})
    p = PipelineProblem.from_spec(rising, latency_max=None)
    assert "rises" in refusal(p)
    assert closed_form_bound(p, time_limit=5)[0] is None
    odd = make_spec(tasks, edges, resources=PORT, demand={"a": {"port": 0.3333}, "b": {}})
    q = PipelineProblem.from_spec(odd, latency_max=None)
    assert not exact_demands(odd, q)
    bound, why = closed_form_bound(q, time_limit=5, exact=False)
    assert bound is None and "thousandth" in why


def test_the_job_applies_the_relaxation_and_never_the_pessimistic_model(tmp_path):
    """The pipeline strategy on the analytic oracle: CP-SAT's bound on its pessimistic model is
    recorded for the model, never for the analytic oracle (it may understate that optimum), and
    the relaxation's bound, which applies, is at least the best plan by brute force."""
    from tasksolve.solver.job.pipeline import PipelineStrategy
    from tasksolve.solver.job.settings import JobSettings

    tasks, edges = {"a": 40, "b": 70, "c": 30}, [("a", "b", 64), ("a", "c", 64)]
    demand = {"a": {"port": 0.3}, "b": {"port": 0.9, "bus": 0.5}, "c": {"bus": 0.6}}
    spec = make_spec(tasks, edges, communication={"pair": 4, "machine": 25}, resources=PORT, demand=demand)
    settings = JobSettings.resolve(spec, oracle_kind="analytic", time_limit=2, workers=1, seed=0)
    strategy = PipelineStrategy(spec, settings)
    strategy.solve(None)
    assert strategy.bound().oracle != "analytic"
    (found,) = strategy.oracle_bounds()
    assert found.oracle == "analytic"
    assert found.value >= best_on_the_oracle(spec, strategy.report.problem) * (1 - 1e-12)
