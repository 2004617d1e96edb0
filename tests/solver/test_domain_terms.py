"""The two encodings of "which domain a thread runs in" (`solver.binding.domain_terms`) against
brute force, and the rule that picks one per level.

* On small random specs (hybrid, irregular, every objective) the membership literals and the
  integer variable each give CP-SAT the brute-force optimum, to the model's resolution, with
  the same status: the integer encoding (forced here by a limit of 0 domains) is what levels
  of more than `MEMBERSHIP_MAX_DOMAINS` domains get, which no small spec reaches.
* A level of at most `MEMBERSHIP_MAX_DOMAINS` domains in use gets literals, a larger one the
  integer variable, and a level whose contexts all lie in one domain a constant.
* ``same_k`` in either encoding, enumerated over every placement of two threads on random sets
  of domains (one side's domains the other may not take included), is true exactly when they
  share a domain.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding import domain_terms
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.domain_terms import ThreadDomain, same_domain
from tasksolve.solver.binding.model import BindingModel
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec_text
from tasksolve.specs import strategies as spec_st
from tests.solver.test_binding_cpsat import feasible_within_latency, model_value
from tests.solver.test_kinds_bounds import RESOLUTION


@contextlib.contextmanager
def membership_limit(domains: int):
    saved = domain_terms.MEMBERSHIP_MAX_DOMAINS
    domain_terms.MEMBERSHIP_MAX_DOMAINS = domains
    try:
        yield
    finally:
        domain_terms.MEMBERSHIP_MAX_DOMAINS = saved


def solve(spec, objective: str, domains: int):
    """CP-SAT alone (no local search, no LP bound) with levels of up to `domains` domains in literals."""
    with membership_limit(domains):
        problem = BindingProblem(spec)
        return solve_binding(
            problem, objective=objective, time_limit=20, workers=1, seed=0, local_search=False, configuration=False
        )


@st.composite
def contended_specs(draw):
    """2 chains of 2-3 tasks on 8 or fewer contexts of a 3-level tree, maybe irregular, whose
    resources (one per level) are loaded past their capacity and whose message costs are drawn
    per level in any order (sharing an inner level may cost more than sharing an outer one), and
    maybe a thread forbidden one socket (so a producer may run in a domain its consumer may not): the
    loads and ``same_k`` terms the two encodings state decide the optimum."""
    outer = draw(st.integers(2, 3))
    middle = [draw(st.integers(1, 2)) for _ in range(outer)]
    inner = [draw(st.integers(1, 2)) for _ in range(sum(middle))]
    n_tasks = draw(st.integers(2, 3))
    assume(2 * n_tasks <= sum(inner) <= 8)  # every thread a context; brute force over 8 at most
    levels = [
        {"name": "socket", "count": outer},
        {"name": "core", "count": middle},
        {"name": "thread", "count": inner},
    ]
    if len(set(middle)) == 1 and len(set(inner)) == 1:
        levels = [
            {"name": "socket", "count": outer},
            {"name": "core", "count": middle[0]},
            {"name": "thread", "count": inner[0]},
        ]
    demand = st.sampled_from([0.2, 0.4, 0.5, 0.7, 0.9])
    tasks = {
        f"t{k}": {
            "cycles": draw(st.sampled_from([100, 200, 400])),
            "demand": {"ports": draw(demand), "l2": draw(demand)},
        }
        for k in range(n_tasks)
    }
    names = list(tasks)
    cost = st.sampled_from([0, 50, 150, 300])
    forbid = {"a#0.t1": ["socket0"]} if draw(st.booleans()) else {}  # domains one side of an edge lacks
    return {
        "tasksolve": 1,
        "name": "contended",
        "constraints": {"forbid": forbid},
        "topology": {
            "name": "small",
            "clock": "1GHz",
            "levels": levels,
            "resources": [
                {"name": "ports", "level": "core", "capacity": 1.0},
                {"name": "l2", "level": "socket", "capacity": 1.0},
            ],
            "communication": {"core": draw(cost), "socket": draw(cost), "machine": draw(cost)},
        },
        "applications": {
            "a": {"tasks": tasks, "edges": [{"from": u, "to": v, "bytes": "64B"} for u, v in zip(names, names[1:])]}
        },
        "workload": [{"app": "a", "instances": 2}],
    }


@settings(max_examples=80, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(
        contended_specs(),
        spec_st.spec_data(max_threads=5, max_contexts=8, max_tasks=3, kinds=True, irregular=True),
    ),
    st.sampled_from(["total_throughput", "min_throughput", "latency"]),
)
def test_both_encodings_reach_the_brute_force_optimum(data, objective):
    spec = spec_st.load(data)
    _plans, batch = feasible_within_latency(spec, BindingProblem(spec))
    results = [solve(spec, objective, limit) for limit in (domain_terms.MEMBERSHIP_MAX_DOMAINS, 0)]
    assert results[0].status == results[1].status
    if batch is None:
        assert results[0].status == "INFEASIBLE"
        return
    best = model_value(batch, objective).max()
    for result in results:
        assert result.status == ("OPTIMAL" if result.rounding.exact else "FEASIBLE")
        value = model_value(BatchModel(spec).evaluate(np.array([result.best.contexts])), objective)[0]
        if result.rounding.exact:  # an exact model: its plan and its bound are the optimum
            assert value == pytest.approx(best, rel=RESOLUTION)
            assert result.best.bound == pytest.approx(abs(best), rel=RESOLUTION)


def wide_spec(cores: int) -> str:
    """`cores` cores of 2 threads in 2 sockets; 6 threads in 2 pipelines, on every context."""
    return f"""
tasksolve: 1
name: wide
topology:
  name: wide
  clock: 1GHz
  levels: [{{name: socket, count: 2}}, {{name: core, count: {cores // 2}}}, {{name: thread, count: 2}}]
  resources:
    - {{name: ports, level: core, capacity: 1.0}}
    - {{name: l3, level: socket, capacity: 1.0}}
  communication: {{core: 10, socket: 40, machine: 200}}
applications:
  a:
    tasks:
      r: {{cycles: 100, demand: {{ports: 0.5, l3: 0.1}}}}
      w: {{cycles: 300, demand: {{ports: 0.6, l3: 0.2}}}}
      t: {{cycles: 150, demand: {{ports: 0.4}}}}
    edges: [{{from: r, to: w, bytes: 64B}}, {{from: w, to: t, bytes: 64B}}]
workload: [{{app: a, instances: 2}}]
"""


@pytest.mark.parametrize("cores, core_form", [(32, "member"), (34, "number")])
def test_a_level_gets_literals_up_to_the_limit_and_a_variable_beyond(cores, core_form):
    spec = load_spec_text(wide_spec(cores), "<wide>")
    model = BindingModel(BindingProblem(spec))
    levels = {name: k for k, name in enumerate(spec.topology.level_names)}
    for per_level in model.domain:
        assert per_level[levels["socket"]].member is not None  # 2 sockets
        core = per_level[levels["core"]]
        assert getattr(core, core_form) is not None
        assert {"member", "number"} - {core_form} <= {f for f in ("member", "number") if getattr(core, f) is None}


def test_a_pinned_thread_has_a_constant_domain_at_every_level():
    text = wide_spec(4) + 'constraints:\n  pin: {"a#0.r": "socket1.core0.thread1"}\n'
    spec = load_spec_text(text, "<wide>")
    model = BindingModel(BindingProblem(spec))
    pinned = [t.name for t in spec.threads].index("a#0.r")
    domains = [where.constant for where in model.domain[pinned]]
    context = spec.topology.parse_context("socket1.core0.thread1")
    assert domains == [spec.topology.domain_of(context, level) for level in range(len(domains))]


def _thread(model, domains: list[int], form: str, name: str) -> tuple[ThreadDomain, dict]:
    """A thread that runs in exactly one of `domains`, as literals or as the domain's number."""
    lits = {d: model.new_bool_var(f"{name}{d}") for d in domains}
    model.add_exactly_one(lits.values())
    if len(domains) == 1:
        return ThreadDomain(constant=domains[0], values=(domains[0],)), lits
    if form == "member":
        return ThreadDomain(member=lits, values=tuple(domains)), lits
    number = model.new_int_var_from_domain(cp_model.Domain.from_values(domains), f"{name}#")
    model.add(number == sum(d * lit for d, lit in lits.items()))
    return ThreadDomain(number=number, values=tuple(domains)), lits


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    st.sets(st.integers(0, 4), min_size=1),
    st.sets(st.integers(0, 4), min_size=1),
    st.sampled_from(["member", "number"]),
)
def test_same_domain_is_true_exactly_when_both_threads_share_a_domain(producer, consumer, form):
    """Every placement of the two threads is allowed exactly once, and `same` says whether they
    share a domain -- domains one side may not take included."""
    model = cp_model.CpModel()
    a, lits_a = _thread(model, sorted(producer), form, "a")
    b, lits_b = _thread(model, sorted(consumer), form, "b")
    same = same_domain(model, a, b, "same")
    seen = []

    class Collect(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            da = next(d for d, lit in lits_a.items() if self.boolean_value(lit))
            db = next(d for d, lit in lits_b.items() if self.boolean_value(lit))
            value = same if isinstance(same, int) else int(self.boolean_value(same))
            seen.append((da, db, value))

    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    assert solver.status_name(solver.solve(model, Collect())) == "OPTIMAL"
    placements = sorted((da, db) for da, db, _value in seen)
    assert placements == sorted((da, db) for da in producer for db in consumer)
    assert all(value == int(da == db) for da, db, value in seen)
