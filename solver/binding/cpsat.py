"""CP-SAT model of the binding problem: the closed-form model of docs/design.md encoded exactly.

Variables and constraints (all integers; scales below):

* ``x[t,c]`` -- thread t runs on context c, for the contexts `BindingProblem.allowed` gives it;
  each thread exactly one context, each context at most one thread; ``max_threads`` caps as
  linear sums per domain.
* ``L[r,D] = sum_t demand(t,r) x[t,c in D]`` -- the load of resource r in each domain D of its
  level (demands in thousandths).
* ``S_t >= Q * L[r, D_r(t)] / capacity_r`` for each resource t loads, and ``S_t >= Q`` -- the
  slowdown ``1/rate_t = max(1, max_r load/capacity)`` times Q.  Q is a common multiple of the
  scaled capacities, so the bound is exact.
* ``W_t = cycles_t + sum_p comm(p,t)`` -- work per packet, where the communication cost of an edge
  is ``cost(-1) + sum_k same_k (cost(k) - cost(k-1))`` and ``same_k`` says that producer and
  consumer share their level-k domain (so the cost is that of the innermost shared level).
* ``E_t = W_t * S_t`` (work / rate), ``P_i = max_{t in i} E_t`` (the period of instance i),
  ``F_t >= F_p + E_t`` along edges and ``Lat_i >= F_t`` (the latency: longest path of E).
* Objective: total throughput ``sum_i clock / P_i`` (as ``sum_i T_i`` with ``T_i P_i <= K``, i.e.
  ``T_i = floor(K / P_i)`` and ``K = 1e6 max P``: relative resolution below 1e-6), or the minimum instance throughput
  (minimise ``max_i P_i``, exact), or the latency (minimise ``max_i Lat_i``, exact).
* ``latency_max``: ``Lat_i <= bound`` for every instance.

Symmetry breaking: `solver.binding.symmetry_breaking` (value precedence among interchangeable
sibling domains).  The K best distinct plans come from re-solving with a no-good on each plan
found; thanks to the symmetry breaking, each is the unique representative of its class.

Around the model (`solve_binding`): the hint is first improved by iterated local search on the
closed form (`solver.binding.local_search`), and for total throughput the bound reported is the
tighter of CP-SAT's and the configuration LP's (`solver.binding.configurations`): on large
instances CP-SAT's linear relaxation stays near the contention-free bound, the configuration LP
does not.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import reduce

from ortools.sat.python import cp_model

from solver import cpsat
from solver.binding.configurations import (
    ConfigurationBound,
    ConfigurationLPFailed,
    NotApplicable,
    configuration_bound,
)
from solver.binding.local_search import LocalSearchResult, improve_plan
from solver.binding.problem import BindingProblem
from solver.binding.symmetry_breaking import SiblingClasses, add_value_precedence
from solver.errors import SolverFailed
from specs import UsableTree

DEMAND_SCALE = 1000   # demands and capacities in thousandths
WORK_SCALE = 100      # cycles in hundredths (communication costs from the cache model are fractional)
THROUGHPUT_RESOLUTION = 10**6
# Q, the slowdown's unit, is the least common multiple of the scaled capacities when that stays at
# most Q_MAX (slowdowns then exact). Capacities such as 1.05, 1.27 and 1.64 have a common multiple
# of 2e9 and more, which overflows CP-SAT's 64-bit domains once multiplied by work; Q is then
# Q_MAX and a slowdown is rounded up to the next 1/Q_MAX (S >= Q, so by a relative 1/Q_MAX at
# most): the model is pessimistic by that much, and the bound it proves is widened by the same
# factor so that it stays a bound of the exact closed form.
Q_MAX = 10_000
INT_LIMIT = 2**62        # CP-SAT's integer domains


@dataclass
class BindingSolution:
    """One plan found by CP-SAT (context per thread) with the model's figures."""

    contexts: list[int]
    status: str
    objective: float          # in the objective's unit: packets/s, or seconds for latency
    bound: float
    gap: float                # relative distance between objective and bound
    wall_time: float
    bound_source: str = "cpsat"   # or "configuration LP"
    found_by: str = "cpsat"       # or "local search" (when CP-SAT did not reach the hint)


@dataclass
class BindingResult:
    """The K best distinct plans, best first."""

    objective_kind: str
    solutions: list[BindingSolution] = field(default_factory=list)
    status: str = "UNKNOWN"
    wall_time: float = 0.0
    symmetry_constraints: int = 0
    local_search: LocalSearchResult | None = None
    configuration_bound: ConfigurationBound | None = None
    notes: list[str] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    slowdown_error: float = 0.0   # relative rounding of the model's slowdowns (0: exact; see Q_MAX)

    @property
    def best(self) -> BindingSolution | None:
        return self.solutions[0] if self.solutions else None

    @property
    def failed_steps(self) -> list[StepOutcome]:
        """The steps that failed on a valid input: the answer may be weaker than it should be."""
        return [step for step in self.steps if step.outcome == "failed"]


@dataclass
class StepOutcome:
    """What one step of `solve_binding` did: ``ok``, ``failed``, ``not applicable`` or ``skipped``."""

    step: str
    outcome: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"step": self.step, "outcome": self.outcome, "detail": self.detail}


def _lcm(values: list[int]) -> int:
    return reduce(lambda a, b: a * b // math.gcd(a, b), values, 1)


class BindingModel:
    """Build once, solve for the best plan, then for the next best ones."""

    def __init__(self, problem: BindingProblem, objective: str | None = None, symmetry: bool = True,
                 assumptions: bool = False) -> None:
        self.problem = problem
        self.objective = objective or problem.spec.objective
        self.model = cp_model.CpModel()
        self._bounds: dict[int, tuple[int, int]] = {}
        self.assumption_literals: dict[str, object] = {}
        self._assumptions = assumptions
        self._build(symmetry and not assumptions)

    # ------------------------------------------------------------------ construction
    def _literal(self, group: str):
        """The enforcement literal of a constraint group (None when not diagnosing)."""
        if not self._assumptions:
            return None
        if group not in self.assumption_literals:
            self.assumption_literals[group] = self.model.new_bool_var(f"assume[{group}]")
        return self.assumption_literals[group]

    def _int(self, low: int, high: int, name: str):
        """A new integer variable whose bounds are remembered (for the bounds of later ones)."""
        if high > INT_LIMIT:
            raise SolverFailed(f"the CP-SAT model of this spec does not fit 64-bit integers ({name} up to {high:.3g}); "
                               "report it with the spec")
        var = self.model.new_int_var(int(low), int(high), name)
        self._bounds[var.index] = (int(low), int(high))
        return var

    def upper(self, value) -> int:
        return value if isinstance(value, int) else self._bounds[value.index][1]

    def lower(self, value) -> int:
        return value if isinstance(value, int) else self._bounds[value.index][0]

    def _enforce(self, constraint, group: str) -> None:
        literal = self._literal(group)
        if literal is not None:
            constraint.only_enforce_if(literal)

    def _build(self, symmetry: bool) -> None:
        p = self.problem
        m = self.model
        topo = p.topology
        spec = p.spec
        n = p.n_threads
        diagnose = self._assumptions

        # -- placement
        candidates = (lambda t: list(range(topo.n_contexts))) if diagnose else (lambda t: p.allowed[t])
        self.x: list[dict[int, object]] = []
        for t in range(n):
            row = {c: m.new_bool_var(f"x[{t},{c}]") for c in candidates(t)}
            m.add_exactly_one(row.values())
            self.x.append(row)
        by_context: dict[int, list] = {}
        for row in self.x:
            for c, lit in row.items():
                by_context.setdefault(c, []).append(lit)
        for lits in by_context.values():
            if len(lits) > 1:
                m.add_at_most_one(lits)
        if diagnose:
            self._add_placement_assumptions()

        # -- caps per domain
        caps = p.caps if not diagnose else {topo.level_index(k): v for k, v in spec.constraints.max_threads.items()}
        for level, cap in caps.items():
            for domain in range(topo.domain_count(level)):
                members = set(topo.contexts_of(level, domain))
                lits = [lit for c, lits in by_context.items() if c in members for lit in lits]
                if len(lits) > cap:
                    self._enforce(m.add(sum(lits) <= cap), "max_threads")

        # -- domains of each thread, per level
        depth = len(topo.levels)
        self.domain: list[list[object]] = []
        for t in range(n):
            per_level = []
            for level in range(depth):
                values = sorted({topo.domain_of(c, level) for c in self.x[t]})
                if len(values) == 1:
                    per_level.append(values[0])
                else:
                    var = m.new_int_var_from_domain(cp_model.Domain.from_values(values), f"dom[{t},{level}]")
                    self._bounds[var.index] = (values[0], values[-1])
                    m.add(var == sum(topo.domain_of(c, level) * lit for c, lit in self.x[t].items()))
                    per_level.append(var)
            self.domain.append(per_level)

        # -- resource loads and slowdowns
        resources = {r.name: r for r in topo.resources}
        scaled_caps = {name: max(1, round(r.capacity * DEMAND_SCALE)) for name, r in resources.items()}
        exact_q = _lcm(sorted(set(scaled_caps.values())))
        self.q = exact_q if exact_q <= Q_MAX else Q_MAX
        self.slowdown_error = 0.0 if exact_q <= Q_MAX else 1.0 / Q_MAX  # relative, pessimistic
        q = self.q
        loads: dict[tuple[str, int], object] = {}
        demand_int = [{r: round(d * DEMAND_SCALE) for r, d in p.demands[t].items()} for t in range(n)]
        for name, resource in resources.items():
            level = topo.level_index(resource.level)
            users = [t for t in range(n) if demand_int[t].get(name, 0) > 0]
            if not users:
                continue
            if level < 0:  # every thread is on the machine: a constant load
                loads[(name, 0)] = sum(demand_int[t][name] for t in users)
                continue
            for domain in range(topo.domain_count(level)):
                members = set(topo.contexts_of(level, domain))
                terms = [(demand_int[t][name], lit) for t in users for c, lit in self.x[t].items() if c in members]
                if not terms:
                    continue
                upper = sum(d for d, _ in terms)
                var = self._int(0, upper, f"load[{name},{domain}]")
                m.add(var == sum(d * lit for d, lit in terms))
                loads[(name, domain)] = var

        self.slowdown: list[object] = []
        for t in range(n):
            pressures = []  # (scaled capacity, load of t's domain, its upper bound)
            for name, d in demand_int[t].items():
                if d <= 0:
                    continue
                level = topo.level_index(resources[name].level)
                table = [loads.get((name, dom), 0) for dom in range(topo.domain_count(level))]
                doms = sorted({topo.domain_of(c, level) for c in self.x[t]})
                upper_load = max(self.upper(table[dom]) for dom in doms)
                if level < 0 or len(doms) == 1:
                    load_t = table[0 if level < 0 else doms[0]]
                else:
                    load_t = self._int(0, max(self.upper(v) for v in table), f"load_of[{t},{name}]")
                    m.add_element(self.domain[t][level], table, load_t)
                pressures.append((scaled_caps[name], load_t, upper_load))
            high = max([q] + [-(-q * upper // cap) for cap, _, upper in pressures])
            s_var = self._int(q, high, f"S[{t}]")
            for cap, load_t, _ in pressures:
                m.add(cap * s_var >= q * load_t)
            self.slowdown.append(s_var)

        # -- work with communication by the innermost shared level
        self.work: list[object] = []
        comm_terms: list[list] = [[] for _ in range(n)]
        comm_const = [0] * n
        for producer, consumer, size in p.edges:
            costs = [round(p.edge_cost(level, size) * WORK_SCALE) for level in range(-1, depth - 1)]
            comm_const[consumer] += costs[0]
            for level in range(depth - 1):
                delta = costs[level + 1] - costs[level]
                if delta == 0:
                    continue
                a, b = self.domain[producer][level], self.domain[consumer][level]
                if isinstance(a, int) and isinstance(b, int):
                    comm_const[consumer] += delta if a == b else 0
                    continue
                same = m.new_bool_var(f"same[{producer},{consumer},{level}]")
                m.add(a == b).only_enforce_if(same)
                m.add(a != b).only_enforce_if(same.negated())
                comm_terms[consumer].append((delta, same))
        for t in range(n):
            base = round(p.cycles[t] * WORK_SCALE) + comm_const[t]
            low = base + sum(min(0, d) for d, _ in comm_terms[t])
            high = base + sum(max(0, d) for d, _ in comm_terms[t])
            if comm_terms[t]:
                w = self._int(max(0, low), high, f"W[{t}]")
                m.add(w == base + sum(d * lit for d, lit in comm_terms[t]))
            else:
                w = base
            self.work.append(w)

        # -- effective time, periods, latency
        self.effective = []
        for t in range(n):
            high = self.upper(self.work[t]) * self.upper(self.slowdown[t])
            e = self._int(0, high, f"E[{t}]")
            if isinstance(self.work[t], int):
                m.add(e == self.work[t] * self.slowdown[t])
            else:
                m.add_multiplication_equality(e, [self.work[t], self.slowdown[t]])
            self.effective.append(e)
        self.period = []
        for i, threads in enumerate(p.instance_threads):
            high = max(self.upper(self.effective[t]) for t in threads)
            var = self._int(0, high, f"P[{i}]")
            m.add_max_equality(var, [self.effective[t] for t in threads])
            self.period.append(var)

        bound = p.latency_bound_cycles if not diagnose else (
            None if spec.constraints.latency_max is None else spec.constraints.latency_max.to_cycles(topo.clock))
        self.latency = []
        if bound is not None or self.objective == "latency":
            finish = []
            for t in range(n):
                high = sum(self.upper(self.effective[u]) for u in p.instance_threads[p.instance_of[t]])
                finish.append(self._int(0, high, f"F[{t}]"))
            for t in range(n):
                m.add(finish[t] >= self.effective[t])
                for pred in p.predecessors[t]:
                    m.add(finish[t] >= finish[pred] + self.effective[t])
            for i, threads in enumerate(p.instance_threads):
                high = max(self.upper(finish[t]) for t in threads)
                lat = self._int(0, high, f"Lat[{i}]")
                for t in threads:
                    m.add(lat >= finish[t])
                self.latency.append(lat)
                if bound is not None:
                    self._enforce(m.add(lat <= math.floor(bound * WORK_SCALE * q)), "latency_max")
        if diagnose:
            return

        # -- objective
        self.unit = WORK_SCALE * q  # E, P and Lat are in cycles * unit
        if self.objective == "min_throughput":
            worst = self._int(0, max(self.upper(v) for v in self.period), "maxP")
            m.add_max_equality(worst, self.period)
            m.minimize(worst)
        elif self.objective == "latency":
            worst = self._int(0, max(self.upper(v) for v in self.latency), "maxLat")
            m.add_max_equality(worst, self.latency)
            m.minimize(worst)
        else:
            self.inverse = []
            # T_i = floor(K / P_i) >= K / max P: K = 1e6 * max P gives a resolution below 1e-6
            self.throughput_k = THROUGHPUT_RESOLUTION * max(self.upper(v) for v in self.period)
            for i, period in enumerate(self.period):
                low = max(1, self.lower(period))
                inv = self._int(0, self.throughput_k // low, f"T[{i}]")
                product = self._int(0, self.throughput_k, f"TP[{i}]")
                m.add_multiplication_equality(product, [inv, period])
                self.inverse.append(inv)
            m.maximize(sum(self.inverse))

        self.symmetry_constraints = 0
        if symmetry:
            self.classes = SiblingClasses(p)
            self.symmetry_constraints = add_value_precedence(m, self.x, self.classes)

    def _add_placement_assumptions(self) -> None:
        """With assumptions: contexts, pins and forbids as enforceable constraints."""
        p = self.problem
        spec = p.spec
        topo = p.topology
        cons = spec.constraints
        usable = set(spec.usable_contexts)
        for t, thread in enumerate(spec.threads):
            name = thread.name
            for c, lit in self.x[t].items():
                if c not in usable:
                    self.model.add(lit == 0).only_enforce_if(self._literal("contexts"))
            for domain in cons.forbid.get(name, []):
                for c in topo.contexts_of(*topo.parse_domain(domain)):
                    if c in self.x[t]:
                        self.model.add(self.x[t][c] == 0).only_enforce_if(self._literal(f"forbid:{name}"))
            if name in cons.pin:
                c = topo.parse_context(cons.pin[name])
                self.model.add(self.x[t][c] == 1).only_enforce_if(self._literal(f"pin:{name}"))
        if cons.contexts is None:
            self.assumption_literals.pop("contexts", None)

    # ------------------------------------------------------------------ solving
    def hint(self, contexts: list[int]) -> None:
        """Hint a plan (moved to its symmetry representative so that it is a solution)."""
        if getattr(self, "classes", None) is not None:
            contexts = self.classes.representative(list(contexts))
        self.model.clear_hints()
        for t, row in enumerate(self.x):
            for c, lit in row.items():
                self.model.add_hint(lit, c == contexts[t])

    def solve(self, time_limit: float = 30.0, workers: int = 2, seed: int = 0,
              deterministic_time: float | None = None) -> tuple[str, list[int] | None, cp_model.CpSolver]:
        solver = cpsat.make_solver(time_limit=time_limit, workers=workers, seed=seed,
                                   deterministic_time=deterministic_time)
        status = cpsat.solve(solver, self.model)
        name = solver.status_name(status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return name, None, solver
        contexts = [next(c for c, lit in row.items() if solver.boolean_value(lit)) for row in self.x]
        return name, contexts, solver

    def exclude(self, contexts: list[int]) -> None:
        """Forbid exactly this plan (a no-good) for the next solve."""
        self.model.add_bool_or([self.x[t][c].negated() for t, c in enumerate(contexts)])

    def objective_value(self, raw: float) -> float:
        """CP-SAT's objective (or bound) in packets/s, or seconds for the latency."""
        clock = self.problem.topology.clock
        if self.objective == "latency":
            return raw / self.unit / clock
        if self.objective == "min_throughput":
            return clock * self.unit / raw if raw > 0 else math.inf
        return clock * self.unit * raw / self.throughput_k


def _exact_value(problem: BindingProblem, objective: str, contexts: list[int]) -> float:
    """The closed form's value of a plan, in the objective's unit (seconds for the latency)."""
    import numpy as np

    from simulate.analytic import BatchModel

    value = float(BatchModel(problem.spec).evaluate(np.array([contexts])).values(objective)[0])
    return -value if objective == "latency" else value


def _heuristic(problem: BindingProblem, objective: str, hint: list[int] | None, seed: int,
               rounds: int, time_limit: float | None) -> LocalSearchResult | None:
    """Iterated local search from the hint (or from one random plan); None if there is no start."""
    from solver.binding.samplers import SamplerError, uniform_plans

    start = hint
    if start is None:
        try:
            start = list(map(int, uniform_plans(problem.spec, 1, seed)[0]))
        except SamplerError:
            return None
    try:
        return improve_plan(problem.spec, start, objective=objective, seed=seed, rounds=rounds, time_limit=time_limit)
    except ValueError:  # the start breaks a cap or the latency bound
        return None


def solve_binding(problem: BindingProblem, *, objective: str | None = None, top_k: int = 1,
                  time_limit: float = 30.0, workers: int = 2, seed: int = 0,
                  hint: list[int] | None = None, symmetry: bool = True,
                  deterministic_time: float | None = None, local_search: bool = True,
                  configuration: bool = True) -> BindingResult:
    """The `top_k` best distinct plans of the closed-form model (best first).

    Steps:

    1. iterated local search from `hint` (at most 400 rounds and 25% of `time_limit`; 2 rounds per
       second of `deterministic_time` and no clock when runs must be repeatable);
    2. CP-SAT hinted with its plan, for 25% of the time (all of it when no configuration bound
       applies); an OPTIMAL answer ends here;
    3. the configuration bound (total throughput only);
    4. CP-SAT again for the time left, hinted with the best plan so far.

    `time_limit` is shared by all steps and all K solves; `deterministic_time` (CP-SAT's
    deterministic limit, split between steps 2 and 4) makes runs repeatable with a fixed `seed`
    and `workers`.  If CP-SAT ends below the local search's plan, that plan comes first.
    """
    start = time.perf_counter()
    objective = objective or problem.spec.objective

    def elapsed() -> float:
        return time.perf_counter() - start

    steps: list[StepOutcome] = []
    heuristic = None
    if local_search:
        if deterministic_time is not None:
            heuristic = _heuristic(problem, objective, hint, seed, max(10, int(2 * deterministic_time)), None)
        else:
            heuristic = _heuristic(problem, objective, hint, seed, 400, 0.25 * time_limit)
        if heuristic is not None:
            hint = heuristic.contexts
        steps.append(StepOutcome("local search", "ok" if heuristic is not None else "not applicable",
                                 "" if heuristic is not None else "no plan to start from satisfies the constraints"))
    else:
        steps.append(StepOutcome("local search", "skipped"))
    bounded = configuration and objective == "total_throughput"
    share = 0.25 if bounded else 1.0
    first_limit = max(0.2 * time_limit, share * time_limit - (0 if bounded else elapsed()))
    first_det = None if deterministic_time is None else (0.5 if bounded else 1.0) * deterministic_time
    result = _solve_model(problem, objective, top_k, first_limit, workers, seed, hint, symmetry, first_det)
    steps.append(_cpsat_outcome("CP-SAT", result))
    if heuristic is not None:
        _keep_heuristic(result, problem, heuristic)
    bound_info, notes = None, []
    if bounded and result.status != "OPTIMAL" and result.status != "INFEASIBLE":
        bound_info = _configuration_step(problem, objective, steps, notes,
                                         None if deterministic_time is not None else max(1.0, time_limit - elapsed()))
        remaining = time_limit - elapsed()
        if deterministic_time is not None or remaining > 1.0:
            best = result.best.contexts if result.best is not None else hint  # the best plan known
            again = _solve_model(problem, objective, top_k, max(remaining, 1.0), workers, seed, best, symmetry,
                                 first_det)
            steps.append(_cpsat_outcome("CP-SAT (second run)", again))
            result = _better(result, again)
        else:
            steps.append(StepOutcome("CP-SAT (second run)", "skipped", "no time left"))
    elif bounded:
        steps.append(StepOutcome("configuration bound", "skipped", f"CP-SAT answered {result.status}"))
    else:
        steps.append(StepOutcome("configuration bound", "not applicable",
                                 "it bounds the total-throughput objective only" if configuration else "turned off"))
    if result.slowdown_error:
        notes.append(f"capacities without a small common multiple: slowdowns rounded up by at most "
                     f"{result.slowdown_error:.0e} (relative); plan values are exact, the bound is widened by as much")
    result.local_search, result.configuration_bound, result.notes = heuristic, bound_info, notes
    result.steps = steps
    if heuristic is not None:
        _keep_heuristic(result, problem, heuristic)
        result.solutions = result.solutions[:top_k]
    if bound_info is not None:
        for solution in result.solutions:
            if bound_info.value < solution.bound:
                solution.bound, solution.bound_source = bound_info.value, "configuration LP"
                solution.gap = max(0.0, (solution.bound - solution.objective) / solution.objective)
    result.wall_time = elapsed()
    return result


def _cpsat_outcome(step: str, result: BindingResult) -> StepOutcome:
    """A CP-SAT run is ok when it answered; no plan within the time limit is the limit's doing, not
    a failure; an invalid model is a failure (a bug to report)."""
    if result.status == "MODEL_INVALID":
        return StepOutcome(step, "failed", "CP-SAT rejected the model (MODEL_INVALID)")
    if result.status == "UNKNOWN":
        return StepOutcome(step, "no answer in time", "no plan and no proof within its share of the time limit")
    return StepOutcome(step, "ok", result.status)


def _configuration_step(problem: BindingProblem, objective: str, steps: list[StepOutcome], notes: list[str],
                        time_limit: float | None) -> ConfigurationBound | None:
    """Step 3: the configuration bound, its outcome recorded (a failure is visible, never silent)."""
    try:
        bound = configuration_bound(problem, objective=objective, time_limit=time_limit)
    except NotApplicable as exc:
        notes.append(f"no configuration bound: {exc}")
        steps.append(StepOutcome("configuration bound", "not applicable", str(exc)))
        return None
    except ConfigurationLPFailed as exc:
        notes.append(f"no configuration bound: {exc}")
        steps.append(StepOutcome("configuration bound", "failed", str(exc)))
        return None
    if not bound.converged:
        notes.append("the configuration LP did not converge in time: its bound is valid but loose")
    steps.append(StepOutcome("configuration bound", "ok",
                             "converged" if bound.converged else "valid, not converged in the time limit"))
    return bound


def _better(first: BindingResult, second: BindingResult) -> BindingResult:
    """The run with the better best plan, with the tighter of the two CP-SAT bounds."""
    if second.best is None:
        return first
    if first.best is None:
        return second
    latency = first.objective_kind == "latency"
    keep = second if (second.best.objective < first.best.objective if latency
                      else second.best.objective > first.best.objective) else first
    other = first if keep is second else second
    for solution in keep.solutions[:1]:
        tighter = max(solution.bound, other.best.bound) if latency else min(solution.bound, other.best.bound)
        if tighter != solution.bound:
            solution.bound = tighter
            solution.gap = abs(tighter - solution.objective) / abs(solution.objective) if solution.objective else math.inf
    if second.status == "OPTIMAL":
        keep.status = "OPTIMAL"
    keep.wall_time = first.wall_time + second.wall_time
    return keep


def _plan_form(problem: BindingProblem):
    """Plan (context per thread) -> its canonical form under the hardware's symmetries."""
    tree = UsableTree.of(problem.topology, problem.usable)
    return lambda contexts: tree.canonical_form({c: t for t, c in enumerate(contexts)})


def _keep_heuristic(result: BindingResult, problem: BindingProblem, heuristic: LocalSearchResult) -> None:
    """Put the local search's plan first when CP-SAT ended below it (the model's value is the
    closed form's, up to the throughput resolution)."""
    value = -heuristic.value if result.objective_kind == "latency" else heuristic.value
    best = result.best
    if best is not None:
        better = value < best.objective * (1 - 1e-9) if result.objective_kind == "latency" else \
            value > best.objective * (1 + 2.0 / THROUGHPUT_RESOLUTION)
        if not better:
            return
    form = _plan_form(problem)
    heuristic_form = form(heuristic.contexts)
    result.solutions = [s for s in result.solutions if form(s.contexts) != heuristic_form]
    bound = best.bound if best is not None else (math.inf if result.objective_kind != "latency" else 0.0)
    gap = abs(bound - value) / abs(value) if value else math.inf
    result.solutions.insert(0, BindingSolution(list(heuristic.contexts), "FEASIBLE", value, bound, gap,
                                               0.0, found_by="local search"))
    if result.status not in ("OPTIMAL", "FEASIBLE"):
        result.status = "FEASIBLE"


def _solve_model(problem: BindingProblem, objective: str, top_k: int, time_limit: float, workers: int,
                 seed: int, hint: list[int] | None, symmetry: bool,
                 deterministic_time: float | None) -> BindingResult:
    """CP-SAT alone: the K best distinct plans of the model."""
    start = time.perf_counter()
    model = BindingModel(problem, objective, symmetry=symmetry)
    if hint is not None:
        model.hint(hint)
    result = BindingResult(objective_kind=model.objective, symmetry_constraints=model.symmetry_constraints,
                           slowdown_error=model.slowdown_error)
    seen: set = set()
    form = _plan_form(problem)
    first = True
    attempts = 0
    while len(result.solutions) < top_k and attempts < 20 * top_k:
        attempts += 1
        remaining = time_limit - (time.perf_counter() - start)
        if deterministic_time is not None:
            remaining = time_limit  # repeatable: every solve gets the same deterministic budget
        elif remaining <= 0.05:
            break
        status, contexts, solver = model.solve(remaining, workers, seed, deterministic_time)
        if first:
            result.status = status
            first = False
        if contexts is None:
            break
        model.exclude(contexts)
        # plans equal up to the hardware's symmetries are one plan to a person, even where the
        # constraints (pins, forbids) break the symmetry for the model: skip those
        key = form(contexts)
        if key in seen:
            continue
        seen.add(key)
        raw_objective, raw_bound = solver.objective_value, solver.best_objective_bound
        if model.objective == "total_throughput":
            raw_bound += len(problem.instance_threads)  # T_i = floor(K / P_i) loses < 1 each
        value, bound = model.objective_value(raw_objective), model.objective_value(raw_bound)
        if model.slowdown_error:  # rounded slowdowns: the plan's exact value, a bound widened to stay one
            value = _exact_value(problem, model.objective, contexts)
            bound = bound / (1 + model.slowdown_error) if model.objective == "latency" else bound * (1 + model.slowdown_error)
        gap = abs(bound - value) / abs(value) if value else math.inf
        result.solutions.append(BindingSolution(contexts, status, value, bound, gap, solver.wall_time))
    result.wall_time = time.perf_counter() - start
    return result
