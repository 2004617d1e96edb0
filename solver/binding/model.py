"""CP-SAT model of the binding problem: the closed-form model of docs/design.md encoded exactly.

Variables and constraints (all integers; scales below), each built by one method of `BindingModel`:

* ``x[t,c]`` -- thread t runs on context c, for the contexts `BindingProblem.allowed` gives it;
  each thread exactly one context, each context at most one thread; ``max_threads`` caps as
  linear sums per domain (`_placement`, `_caps`).
* ``L[r,D] = sum_t demand(t,r) x[t,c in D]`` -- the load of resource r in each domain D of its
  level (demands and capacity in units of ``1/s_r``: thousandths, finer for a resource whose
  capacity or demands are below a thousandth, see `resource_scales`; `_loads`).
* ``S_t >= Q * L[r, D_r(t)] / capacity_r`` for each resource t loads, and ``S_t >= Q`` -- the
  slowdown ``1/rate_t = max(1, max_r load/capacity)`` times Q (`_slowdowns`).  Q is a common
  multiple of the scaled capacities, so the bound is exact (see `Q_MAX` for when it is not).
* ``W_t = cycles_t + sum_p comm(p,t)`` -- work per packet, where the communication cost of an edge
  is ``cost(-1) + sum_k same_k (cost(k) - cost(k-1))`` and ``same_k`` says that producer and
  consumer share their level-k domain, so the cost is that of the innermost shared level (`_work`).
* ``E_t = W_t * S_t`` (work / rate), ``P_i = max_{t in i} E_t / R_t`` (the period of instance i;
  ``R_t`` the replicas of t's task, each taking 1/R_t of the packets: held as ``L / R_t`` times
  ``E_t`` with ``L`` their least common multiple, and a message's cost weighted by its share),
  ``F_t >= F_p + E_t`` along edges and ``Lat_i >= F_t`` (the latency: longest path of E;
  `_timing`, `_latency`).
* Objective (`_objective`): total throughput ``sum_i clock / P_i`` (as ``sum_i T_i`` with
  ``T_i P_i <= K``, i.e. ``T_i = floor(K / P_i)`` and ``K = r max P``: relative resolution 1/r with
  r = 1e6, or less where CP-SAT's check that the sum of all domains fits 64 bits needs it --
  `BindingModel.throughput_resolution`), or the minimum instance throughput (minimise ``max_i P_i``, exact), or the latency
  (minimise ``max_i Lat_i``, exact).
* ``latency_max``: ``Lat_i <= bound`` for every instance.

**Rounding** (`Rounding`): demands, capacities, cycles and message costs become integers.  Where
every one of them is exact the model is the closed form (up to the throughput resolution).
Otherwise each thread's time per packet ``E_t`` in the model lies within
``[E_t / optimism, E_t * pessimism]`` of the closed form's; the bound the model proves is widened
by `pessimism` (so it bounds the closed form), ``latency_max`` is relaxed by the same factor (so
every plan that meets it exactly stays feasible; a found plan is checked against the exact
latency), and plan values are the closed form's own.  Quantities no 64-bit integer can hold
(capacities near 1e-300 beside demands near 1) refuse the model (`ModelTooLarge`): the other
steps answer without it.

NPIRE's synchronisation is left out: critical sections (lock waits, failed speculation) only
lengthen the closed form's times, so the model stays a relaxation; early signals only shorten its
latencies, so where a latency is bounded or minimised the model proves nothing (`Rounding`:
`latency_pessimistic`; `solver.binding.cpsat` then reports no bound).

Symmetry breaking: `solver.binding.symmetry_breaking` (value precedence among interchangeable
sibling domains).  With ``assumptions=True`` the placement constraints become enforceable groups
(`solver.binding.conflicts` uses them to name the constraints that clash).
"""

from __future__ import annotations

import math

from ortools.sat.python import cp_model

from tasksolve.solver import cpsat
from tasksolve.solver.binding.domain_terms import ThreadDomain, load_options, same_domain, thread_domains
from tasksolve.solver.binding.kind_terms import cycles_terms, device_terms
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.rounding import Rounding, ratio_range, resource_scales, sync_fields
from tasksolve.solver.binding.symmetry_breaking import SiblingClasses, add_value_precedence
from tasksolve.solver.errors import SolverFailed

WORK_SCALE = 100  # cycles in hundredths (communication costs from the cache model are fractional)
THROUGHPUT_RESOLUTION = 10**6
# Q, the slowdown's unit, is the least common multiple of the scaled capacities when that stays at
# most Q_MAX (slowdowns then exact). Capacities such as 1.05, 1.27 and 1.64 have a common multiple
# of 2e9 and more, which overflows CP-SAT's 64-bit domains once multiplied by work; Q is then
# Q_MAX and a slowdown is rounded up to the next 1/Q_MAX (S >= Q, so by a relative 1/Q_MAX at
# most): the model is pessimistic by that much, and the bound it proves is widened by the same
# factor so that it stays a bound of the exact closed form.
Q_MAX = 10_000
INT_LIMIT = 2**62  # CP-SAT's integer domains
DOMAIN_SUM_LIMIT = 2**62  # CP-SAT's check is the sum of every variable's magnitude below 2^63: half
MIN_RESOLUTION = 1000  # the coarsest throughput resolution accepted (relative 1e-3 per instance)


BUILD_SECONDS_PER_LITERAL = 1.5e-4  # twice the 6-8e-5 s measured (bench/scale_model_size.py): presolve margin
MAX_LITERALS = 1_000_000  # above, the model alone would take gigabytes: refused


class ModelTooLarge(SolverFailed):
    """The exact model would not be valid for CP-SAT (64-bit sums) or would not fit the memory."""


def check_size(problem: BindingProblem, time_limit: float | None) -> None:
    """Refuse, before building, a model too large for the memory or for its share of the time.

    The model's size is its placement literals ``sum_t |allowed contexts of t|`` (at most threads x
    contexts; the loads, slowdowns and timing add O(threads x levels) more): its build time is
    estimated at `BUILD_SECONDS_PER_LITERAL` each, and a model whose build alone would take half
    of `time_limit`, or with more than `MAX_LITERALS`, raises `ModelTooLarge`."""
    literals = sum(len(row) for row in problem.allowed)
    if literals > MAX_LITERALS:
        raise ModelTooLarge(
            f"the CP-SAT model would have {literals:,} placement literals (limit {MAX_LITERALS:,}): too large"
        )
    estimate = literals * BUILD_SECONDS_PER_LITERAL
    if time_limit is not None and estimate > 0.5 * time_limit:
        raise ModelTooLarge(
            f"the CP-SAT model ({literals:,} placement literals) would take about {estimate:.0f} s to build, "
            f"more than half of its {time_limit:.0f} s"
        )


class BindingModel:
    """Build once, solve for the best plan, then for the next best ones."""

    def __init__(
        self, problem: BindingProblem, objective: str | None = None, symmetry: bool = True, assumptions: bool = False
    ) -> None:
        self.problem = problem
        self.objective = objective or problem.spec.objective
        self.model = cp_model.CpModel()
        self._bounds: dict[int, tuple[int, int]] = {}
        self.assumption_literals: dict[str, object] = {}
        self._assumptions = assumptions
        self.symmetry_constraints = 0
        self._build(symmetry and not assumptions)

    # ------------------------------------------------------------------ helpers
    def _literal(self, group: str):
        """The enforcement literal of a constraint group (None when not diagnosing)."""
        if not self._assumptions:
            return None
        if group not in self.assumption_literals:
            self.assumption_literals[group] = self.model.new_bool_var(f"assume[{group}]")
        return self.assumption_literals[group]

    @staticmethod
    def _fits(high: int, name: str) -> None:
        """Refuse (`ModelTooLarge`) a variable or a constraint's term that could pass `INT_LIMIT`."""
        if high > INT_LIMIT:
            raise ModelTooLarge(
                f"the CP-SAT model of this spec does not fit 64-bit integers ({name} up to {high:.3g}: "
                "capacities, demands or cycles span too many orders of magnitude)"
            )

    def _int(self, low: int, high: int, name: str):
        """A new integer variable whose bounds are remembered (for the bounds of later ones)."""
        self._fits(high, name)
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

    # ------------------------------------------------------------------ construction
    def _build(self, symmetry: bool) -> None:
        """The model in the order of the module docstring."""
        by_context = self._placement()
        self._caps(by_context)
        self._domains()
        self.scales = resource_scales(self.problem)
        demand_int = [{r: round(d * self.scales[r]) for r, d in demands.items()} for demands in self.problem.demands]
        self._slowdowns(demand_int, self._loads(demand_int))
        self._work()
        locks, signals = sync_fields(self.problem)
        latencies = self.objective == "latency" or self.problem.latency_bound_cycles is not None
        self.rounding = Rounding.of(
            self._slowdown_rounding(demand_int), self._work_rounding, locks, signals and latencies
        )
        self._timing()
        self._latency()
        if self._assumptions:
            return
        self._objective()
        if symmetry:
            self.classes = SiblingClasses(self.problem)
            self.symmetry_constraints = add_value_precedence(self.model, self.x, self.classes)

    def _placement(self) -> dict[int, list]:
        """x[t,c]: one context per thread, one thread per context; the literals of each context."""
        p, m = self.problem, self.model
        every = list(p.topology.usable_contexts)  # the machine's own limits hold even here
        self.x: list[dict[int, object]] = []
        for t in range(p.n_threads):
            row = {c: m.new_bool_var(f"x[{t},{c}]") for c in (every if self._assumptions else p.allowed[t])}
            m.add_exactly_one(row.values())
            self.x.append(row)
        by_context: dict[int, list] = {}
        for row in self.x:
            for c, lit in row.items():
                by_context.setdefault(c, []).append(lit)
        for lits in by_context.values():
            if len(lits) > 1:
                m.add_at_most_one(lits)
        if self._assumptions:
            self._add_placement_assumptions()
        return by_context

    def _caps(self, by_context: dict[int, list]) -> None:
        """``max_threads``: at most `cap` threads in every domain of the capped level."""
        p, topo = self.problem, self.problem.topology
        caps = (
            p.caps
            if not self._assumptions
            else {topo.level_index(k): v for k, v in p.spec.constraints.max_threads.items()}
        )
        for level, cap in caps.items():
            for domain in range(topo.domain_count(level)):
                members = set(topo.contexts_of(level, domain))
                lits = [lit for c, lits in by_context.items() if c in members for lit in lits]
                if len(lits) > cap:
                    self._enforce(self.model.add(sum(lits) <= cap), "max_threads")

    def _domains(self) -> None:
        """The domain of each thread at each level: a constant, membership literals or a variable
        tied to x (`solver.binding.domain_terms`)."""
        self.domain = thread_domains(self.model, self.problem.topology, self.x, self._bounds)

    def _loads(self, demand_int: list[dict[str, int]]) -> dict[tuple[str, int], object]:
        """L[r,D]: the summed demand of resource r in each domain D of its level."""
        topo = self.problem.topology
        loads: dict[tuple[str, int], object] = {}
        for resource in topo.resources:
            name = resource.name
            level = topo.level_index(resource.level)
            users = [t for t, demands in enumerate(demand_int) if demands.get(name, 0) > 0]
            if not users:
                continue
            if level < 0:  # every thread is on the machine: a constant load
                loads[(name, 0)] = sum(demand_int[t][name] for t in users)
                continue
            by_domain: dict[int, list] = {}  # one pass over the literals: linear in threads x contexts
            for t in users:
                for c, lit in self.x[t].items():
                    by_domain.setdefault(topo.domain_of(c, level), []).append((demand_int[t][name], lit))
            for domain in range(topo.domain_count(level)):
                terms = by_domain.get(domain, [])
                if not terms:
                    continue
                var = self._int(0, sum(d for d, _ in terms), f"load[{name},{domain}]")
                self.model.add(var == sum(d * lit for d, lit in terms))
                loads[(name, domain)] = var
        return loads

    def _slowdowns(self, demand_int: list[dict[str, int]], loads: dict[tuple[str, int], object]) -> None:
        """S_t >= Q L / capacity for each resource t loads, S_t >= Q (Q: see `Q_MAX`)."""
        topo, m = self.problem.topology, self.model
        resources = {r.name: r for r in topo.resources}
        scaled_caps = {name: max(1, round(r.capacity * self.scales[name])) for name, r in resources.items()}
        self.scaled_caps = scaled_caps
        exact_q = math.lcm(*sorted(set(scaled_caps.values())))
        self.q = exact_q if exact_q <= Q_MAX else Q_MAX
        self.slowdown_error = 0.0 if exact_q <= Q_MAX else 1.0 / Q_MAX  # relative, pessimistic
        q = self.q
        levels = {name: topo.level_index(r.level) for name, r in resources.items()}
        tables = {name: [loads.get((name, d), 0) for d in range(topo.domain_count(k))] for name, k in levels.items()}
        machine = ThreadDomain(constant=0, values=(0,))  # every thread's domain at the machine level
        self.slowdown: list[object] = []
        for t, demands in enumerate(demand_int):
            pressures = []  # (scaled capacity, [(a load of t's domain, literal under which it is t's)], upper)
            for name, d in demands.items():
                if d <= 0:
                    continue
                level, table = levels[name], tables[name]
                where = machine if level < 0 else self.domain[t][level]
                upper_load = max(self.upper(table[dom]) for dom in where.values)
                options = load_options(m, where, table, self._int, self.upper, f"load_of[{t},{name}]")
                pressures.append((scaled_caps[name], options, upper_load))
            high = max([q] + [-(-q * upper // cap) for cap, _, upper in pressures])
            s_var = self._int(q, high, f"S[{t}]")
            for cap, options, upper in pressures:
                self._fits(max(cap * high, q * upper), f"Q x load of S[{t}]")
                for load_t, literal in options:
                    bound = m.add(cap * s_var >= q * load_t)
                    if literal is not None:
                        bound.only_enforce_if(literal)
            self.slowdown.append(s_var)

    def _slowdown_rounding(self, demand_int: list[dict[str, int]]) -> tuple[float, float]:
        """(pessimism, optimism) of the slowdowns: each thread's load share ``d / capacity`` as
        the model holds it against the exact one, and Q's rounding up (`Q_MAX`)."""
        resources = {r.name: r for r in self.problem.topology.resources}
        pairs = []
        for demands, ints in zip(self.problem.demands, demand_int):
            for name, d in demands.items():
                model = ints.get(name, 0) / self.scaled_caps[name]
                pairs.append((model, d / float(resources[name].capacity)))
        high, low = ratio_range(pairs)
        return high * (1.0 + self.slowdown_error), low

    def _work(self) -> None:
        """W_t: cycles plus the communication cost of each input edge at the innermost shared level."""
        p, m = self.problem, self.model
        n, depth = p.n_threads, len(p.topology.levels)
        comm_terms, comm_const = [[] for _ in range(n)], [0] * n
        pairs = [(round(c * WORK_SCALE), c * WORK_SCALE) for row in p.kind_cycles for c in row]
        for producer, consumer, size, weight in p.edges:  # weight: share of the consumer's packets (replicas)
            exact = [p.edge_cost(level, size) * weight * WORK_SCALE for level in range(-1, depth - 1)]
            costs = [round(c) for c in exact]
            pairs += zip(costs, exact)
            comm_const[consumer] += costs[0]
            for level in range(depth - 1):
                delta = costs[level + 1] - costs[level]
                if delta == 0:
                    continue
                a, b = self.domain[producer][level], self.domain[consumer][level]
                same = same_domain(m, a, b, f"same[{producer},{consumer},{level}]")
                if isinstance(same, int):
                    comm_const[consumer] += delta * same
                    continue
                comm_terms[consumer].append((delta, same))
        for t, table in p.device_tables.items():  # reaching a device: by the context t takes
            least, terms, exact = device_terms(self.x[t], {c: table[c] * WORK_SCALE for c in self.x[t]})
            comm_const[t], comm_terms[t], pairs = comm_const[t] + least, comm_terms[t] + terms, pairs + exact
        self.work: list[object] = []
        for t in range(n):
            scaled = [round(c * WORK_SCALE) for c in p.kind_cycles[t]]
            base, kind_terms = cycles_terms(self.model, self.x[t], scaled, p.topology.context_kinds, t)
            base += comm_const[t]
            if not comm_terms[t] and not kind_terms:
                self.work.append(base)
                continue
            comm_terms[t] += kind_terms
            low = base + sum(min(0, d) for d, _ in comm_terms[t])
            high = base + sum(max(0, d) for d, _ in comm_terms[t])
            w = self._int(max(0, low), high, f"W[{t}]")
            m.add(w == base + sum(d * lit for d, lit in comm_terms[t]))
            self.work.append(w)
        self._work_rounding = ratio_range(pairs)  # a sum of rounded terms: within the worst term's ratio

    def _timing(self) -> None:
        """E_t = W_t S_t and the period P_i = max over instance i's threads of E_t."""
        p, m = self.problem, self.model
        self.effective = []
        for t in range(p.n_threads):
            e = self._int(0, self.upper(self.work[t]) * self.upper(self.slowdown[t]), f"E[{t}]")
            if isinstance(self.work[t], int):
                m.add(e == self.work[t] * self.slowdown[t])
            else:
                m.add_multiplication_equality(e, [self.work[t], self.slowdown[t]])
            self.effective.append(e)
        self.period = []  # in units of 1/L: a replica's E_t counts L/R_t times (L: `replica_lcm`)
        factor = [round(p.replica_lcm * share) for share in p.share]
        for i, threads in enumerate(p.instance_threads):
            var = self._int(0, max(self.upper(self.effective[t]) * factor[t] for t in threads), f"P[{i}]")
            m.add_max_equality(var, [self.effective[t] * factor[t] for t in threads])
            self.period.append(var)

    def _latency(self) -> None:
        """Finish times along the task graph and Lat_i; ``latency_max`` as Lat_i <= bound."""
        p, m, topo = self.problem, self.model, self.problem.topology
        latency_max = p.spec.constraints.latency_max
        if self._assumptions:
            bound = None if latency_max is None else latency_max.to_cycles(topo.clock)
        else:
            bound = p.latency_bound_cycles
        self.latency = []
        if bound is None and self.objective != "latency":
            return
        finish = []
        for t in range(p.n_threads):
            high = sum(self.upper(self.effective[u]) for u in p.instance_threads[p.instance_of[t]])
            finish.append(self._int(0, high, f"F[{t}]"))
        for t in range(p.n_threads):
            m.add(finish[t] >= self.effective[t])
            for pred in p.predecessors[t]:
                m.add(finish[t] >= finish[pred] + self.effective[t])
        for i, threads in enumerate(p.instance_threads):
            lat = self._int(0, max(self.upper(finish[t]) for t in threads), f"Lat[{i}]")
            for t in threads:
                m.add(lat >= finish[t])
            self.latency.append(lat)
            if bound is not None:
                # relaxed by the model's pessimism (see Rounding): no plan meeting it exactly is lost
                relaxed = bound * WORK_SCALE * self.q * self.rounding.pessimism
                self._enforce(m.add(lat <= math.floor(relaxed)), "latency_max")

    def _objective(self) -> None:
        """Total throughput (sum of floor(K / P_i)), minimum throughput, or latency."""
        m = self.model
        self.unit = WORK_SCALE * self.q  # E, P and Lat are in cycles * unit
        if self.objective == "min_throughput":
            worst = self._int(0, max(self.upper(v) for v in self.period), "maxP")
            m.add_max_equality(worst, self.period)
            m.minimize(worst)
            return
        if self.objective == "latency":
            worst = self._int(0, max(self.upper(v) for v in self.latency), "maxLat")
            m.add_max_equality(worst, self.latency)
            m.minimize(worst)
            return
        self.inverse = []
        # T_i = floor(K / P_i) >= K / max P: K = r * max P gives a relative resolution of 1/r
        # (r = 1e6 unless the domains would not fit: `throughput_resolution`)
        self.resolution = self.throughput_resolution()
        self.throughput_k = self.resolution * max(self.upper(v) for v in self.period)
        for i, period in enumerate(self.period):
            inv = self._int(0, self.throughput_k // max(1, self.lower(period)), f"T[{i}]")
            product = self._int(0, self.throughput_k, f"TP[{i}]")
            m.add_multiplication_equality(product, [inv, period])
            self.inverse.append(inv)
        m.maximize(sum(self.inverse))

    def domain_sum(self) -> int:
        """Sum over the model's variables of their largest magnitude: CP-SAT rejects a model
        (MODEL_INVALID, "the sum of all variable domains do not fit on an int64") past 2^63."""
        proto = self.model.proto  # held: OR-Tools 9.15's proto views read 0 once their parent is freed
        total = 0
        for variable in proto.variables:
            domain = list(variable.domain)
            total += max(abs(domain[0]), abs(domain[-1]))
        return total

    def throughput_resolution(self) -> int:
        """The largest r <= THROUGHPUT_RESOLUTION whose T and TP variables keep `domain_sum` below
        DOMAIN_SUM_LIMIT: with K = r max P they add ``sum_i r (max P / min P_i + max P)``.

        Raises `SolverFailed` when not even r = MIN_RESOLUTION fits (the caller falls back)."""
        top = max(self.upper(v) for v in self.period)
        per_unit = sum(top // max(1, self.lower(v)) + 1 + top for v in self.period)
        room = DOMAIN_SUM_LIMIT - self.domain_sum()
        resolution = min(THROUGHPUT_RESOLUTION, room // max(1, per_unit))
        if resolution < MIN_RESOLUTION:
            raise ModelTooLarge(
                f"the CP-SAT model of {len(self.period)} instances does not fit 64-bit sums even with a "
                f"throughput resolution of 1/{MIN_RESOLUTION}"
            )
        return int(resolution)

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

    def solve(
        self, time_limit: float = 30.0, workers: int = 2, seed: int = 0, deterministic_time: float | None = None
    ) -> tuple[str, list[int] | None, cp_model.CpSolver]:
        solver = cpsat.make_solver(
            time_limit=time_limit, workers=workers, seed=seed, deterministic_time=deterministic_time
        )
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
        unit = self.unit * self.problem.replica_lcm  # the period's unit (`_timing`)
        if self.objective == "min_throughput":
            return clock * unit / raw if raw > 0 else math.inf
        return clock * unit * raw / self.throughput_k
