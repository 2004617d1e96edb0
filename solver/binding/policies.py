"""The pinning policies a performance engineer uses instead of a solver, as baselines of `tasksolve solve`.

Each pinned policy maps the spec's threads, **in the order of** ``spec.threads`` (the workload's
application instances one after another, each instance's tasks in the order its application lists
them -- not dependency order: the order the program is expected to create its threads, the order
``{cpus}`` and ``OMP_PLACES`` lists give CPUs in, `simulate.pinning`), onto hardware contexts:

* ``compact`` -- `compact`: likwid-pin ``-c E:N:<n>`` and OpenMP ``OMP_PROC_BIND=close`` with
  ``OMP_PLACES=threads``: consecutive contexts in depth-first order (every SMT sibling of the
  first core, then the next core's);
* ``compact-cores`` -- `compact_cores`: ``OMP_PROC_BIND=close`` with ``OMP_PLACES=cores`` (and
  likwid's "physical cores first"): one thread per core in depth-first order, a second context
  of a core only once every core has one;
* ``scatter`` -- `scatter`: likwid-pin ``-c S:scatter`` (and Intel's ``KMP_AFFINITY=scatter``):
  round-robin over the top level's domains, recursively inside each, so consecutive threads land
  as far apart as the tree allows;
* ``distrib`` -- `distrib`: ``hwloc-distrib --single <n>``: hwloc's recursive division of the
  items over the children of each object in proportion to their contexts;
* ``os`` -- the program unpinned (``TASKSOLVE_PINNING=none``, `simulate.pinning`): measured on an
  oracle that can run it (the command oracle); the models (closed form, simulation) place every
  thread on one context for the whole run and hold no model of an OS scheduler's moving
  placement, so there the row says it is not measured (the ``balanced`` rows are the load
  balancer's aim, `solver.binding.samplers`).

**Constraints.**  The policies see what the tools see: the process's allowed CPUs (the spec's
usable contexts: ``constraints.contexts``, the topology's ``usable`` and the contexts an
irregular tree has, `Spec.usable_contexts`) and the threads a user pins by hand
(``constraints.pin``: those keep their context and their contexts are taken out of the list).
The plan is then checked, never repaired: a plan that breaks ``forbid``, ``max_threads``
(`specs.plan.check_plan`) or ``latency_max`` (on the closed form, as the samplers read it) is
reported infeasible for the spec, with the first reason, and not measured.  The unpinned run
honours none of the placement constraints: where the spec has any, its row says so and it is
left out of the gain.

`measure` adds the rows to a comparison (`solver.binding.compare`); `gain_over_policies` is how
much the chosen plan gains over the best measured policy (`report.PolicyGain`).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tasksolve.solver.binding.report import PolicyGain, Row, half_width
from tasksolve.specs import Plan

OS = "os"
OS_LABEL = "os (unpinned)"
PINNED = ("compact", "compact-cores", "scatter", "distrib")
POLICIES = (*PINNED, OS)


@dataclass(frozen=True)
class PolicyPlan:
    """One policy's plan for a spec: the context of every thread of ``spec.threads`` (None when
    the plan is infeasible for the spec, `problem` saying why)."""

    policy: str
    contexts: list[int] | None
    problem: str = ""


# ------------------------------------------------------------------------------------- the policies
def compact(topology, contexts: Sequence[int], n: int) -> list[int]:
    """likwid-pin's ``-c E:N:<n>`` (RRZE-HPC/likwid, doc/applications/likwid-pin.md, "Numbering
    by expression": the first n entries of the node domain, whose order lists a core's SMT
    threads next to each other) and OpenMP's ``OMP_PROC_BIND=close`` over ``OMP_PLACES=threads``
    (OpenMP 5.0 §2.6.2, "Controlling OpenMP Thread Affinity": thread i on place i when there are
    no more threads than places): the first `n` of `contexts` in depth-first order, i.e. every
    SMT sibling of a core before the next core."""
    return sorted(contexts)[:n]


def core_level(topology) -> int:
    """The level that ``OMP_PLACES=cores`` counts as cores: the one named ``core`` (as
    `specs.importers` names it), else the contexts' parent level, else (one level) the contexts."""
    names = topology.level_names
    return names.index("core") if "core" in names else max(len(names) - 2, 0)


def compact_cores(topology, contexts: Sequence[int], n: int) -> list[int]:
    """``OMP_PROC_BIND=close`` over ``OMP_PLACES=cores`` (OpenMP 5.0 §2.6.2: thread i on core i
    while there are no more threads than cores), with likwid's "physical cores first" for the
    rest (likwid-pin.md, "Scatter expression"): one thread per core (`core_level`) in
    depth-first order, then each core's second context, and so on.  Departure: with more
    threads than cores OpenMP would give each core ``floor(T/P)`` or ``ceil(T/P)`` *consecutive*
    threads, floating on its contexts; a plan binds one context per thread, so the wrap is
    likwid's instead."""
    stride = topology.strides[core_level(topology)]
    seen: Counter[int] = Counter()
    keyed = []
    for c in sorted(contexts):
        keyed.append((seen[c // stride], c // stride, c))
        seen[c // stride] += 1
    return [c for _, _, c in sorted(keyed)][:n]


def scatter(topology, contexts: Sequence[int], n: int) -> list[int]:
    """likwid-pin's ``-c S:scatter`` (likwid-pin.md, "Scatter expression": with sockets
    ``S0 = 0,4,1,5`` and ``S1 = 2,6,3,7`` the list is ``0,2,1,3,4,6,5,7``; Intel's
    ``KMP_AFFINITY=scatter`` orders the same way): round-robin over the top level's domains
    (socket 0, socket 1, ...), each domain's own turn taken round-robin over its children, down
    to the contexts; domains without a context left are skipped.  OpenMP's
    ``OMP_PROC_BIND=spread`` instead cuts the place list into equal consecutive parts and takes
    the first place of each -- on a uniform tree the same contexts as `distrib`."""
    orders = {c: [c] for c in sorted(contexts)}  # one domain's order, by domain index, innermost level first
    for level in reversed(range(len(topology.levels) - 1)):
        stride = topology.strides[level]
        parents: dict[int, list[list[int]]] = {}
        for order in orders.values():
            parents.setdefault(order[0] // stride, []).append(order)
        orders = {parent: _round_robin(children) for parent, children in parents.items()}
    return _round_robin(list(orders.values()))[:n]


def _round_robin(orders: list[list[int]]) -> list[int]:
    """The first of each order, then the second of each, ... (shorter orders drop out)."""
    return [order[r] for r in range(max(map(len, orders), default=0)) for order in orders if r < len(order)]


def distrib(topology, contexts: Sequence[int], n: int) -> list[int]:
    """``hwloc-distrib --single <n>``: the items of `distrib_sets`, each singlified as
    ``hwloc_bitmap_singlify`` does (the lowest OS CPU of its set); item i is thread i's."""
    return [min(item, key=lambda c: (topology.os_cpu(c), c)) for item in distrib_sets(topology, contexts, n)]


def distrib_sets(topology, contexts: Sequence[int], n: int) -> list[list[int]]:
    """`hwloc_distrib` (open-mpi/hwloc, include/hwloc/helper.h, v1.10 and later, the rounding
    from hwloc-users, March 2014, "distributing across cores with hwloc-distrib"): `n` sets of
    `contexts`, from the machine down.

    An object's children, in order, each of weight w (its contexts among `contexts`; W the
    children's total) get ``ceil((given + w) n / W) - ceil(given n / W)`` items, ``given`` the
    weight of the children before it; a child with no context is skipped; a context, or a child
    given one item, takes its items whole (its set); a child given none adds its set to the
    previous item's; a child given more is divided likewise.  The machine itself is the first
    object (one item: the whole set)."""
    contexts = sorted(contexts)
    items: list[list[int]] = []
    last = len(topology.levels) - 1

    def inside(level: int, domain: int) -> list[int]:
        if level < 0:
            return contexts
        span = topology.contexts_of(level, domain)
        return contexts[bisect.bisect_left(contexts, span.start) : bisect.bisect_left(contexts, span.stop)]

    def divide(level: int, domains: range, count: int) -> None:
        sets = [inside(level, d) for d in domains]
        total, given = sum(map(len, sets)), 0
        for domain, mine in zip(domains, sets):
            if not mine:
                continue
            chunk = _ceil_div((given + len(mine)) * count, total) - _ceil_div(given * count, total)
            if level == last or chunk <= 1:
                if chunk:
                    items.extend(list(mine) for _ in range(chunk))
                else:
                    items[-1] = items[-1] + mine
            else:
                width = topology.counts[level + 1]
                divide(level + 1, range(domain * width, (domain + 1) * width), chunk)
            given += len(mine)

    if n > 0 and contexts:
        divide(-1, range(1), n)
    return items


def _ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` in integers (hwloc's ``(a + b - 1) / b``)."""
    return -(-a // b)


PLANNERS: dict[str, Callable[..., list[int]]] = {
    "compact": compact,
    "compact-cores": compact_cores,
    "scatter": scatter,
    "distrib": distrib,
}


# ------------------------------------------------------------------------------------- plans for a spec
def policy_plan(spec, policy: str, batch=None) -> PolicyPlan:
    """`policy`'s plan for `spec` (module docstring: usable contexts and pins honoured, the other
    constraints checked); `batch`, a `simulate.analytic.BatchModel`, reads ``latency_max``."""
    from tasksolve.specs.plan import check_plan

    topology, index = spec.topology, spec.thread_index
    pins = {index[name]: topology.parse_context(ctx) for name, ctx in spec.constraints.pin.items()}
    taken = set(pins.values())
    free = [c for c in spec.usable_contexts if c not in taken]
    threads = [t for t in range(len(spec.threads)) if t not in pins]
    if len(threads) > len(free):
        return PolicyPlan(policy, None, f"{len(threads)} threads do not fit in {len(free)} usable contexts")
    contexts = [0] * len(spec.threads)
    for t, c in pins.items():
        contexts[t] = c
    for t, c in zip(threads, PLANNERS[policy](topology, free, len(threads))):
        contexts[t] = int(c)
    problems = [p.message for p in check_plan(spec, Plan.from_contexts(spec, contexts))]
    bound = spec.constraints.latency_max
    if not problems and bound is not None:
        from tasksolve.simulate.analytic import BatchModel

        seconds = bound.to_seconds(topology.clock)
        latency = float((batch or BatchModel(spec)).evaluate(np.array([contexts])).latency_max[0])
        if latency > seconds * (1 + 1e-9):
            problems.append(f"its latency on the closed form, {latency:.4g} s, is above latency_max ({seconds:.4g} s)")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return PolicyPlan(policy, None, problems[0] + more)
    return PolicyPlan(policy, contexts)


def ignored_by_os(spec) -> list[str]:
    """The spec's constraints an unpinned run does not honour (it may use any CPU)."""
    cons = spec.constraints
    named = {
        "constraints.contexts": cons.contexts is not None,
        "constraints.pin": bool(cons.pin),
        "constraints.forbid": bool(cons.forbid),
        "constraints.max_threads": bool(cons.max_threads),
        "constraints.latency_max": cons.latency_max is not None,
    }
    return [name for name, present in named.items() if present]


# ------------------------------------------------------------------------------------- rows
def measure(run, names: Sequence[str]) -> None:
    """The rows of the policies `names` on the comparison `run` (a
    `solver.binding.compare._Comparison`): each feasible plan measured on its oracle (a plan two
    policies share, once) and made a finalist; an infeasible one a row that says why."""
    plans = [policy_plan(run.spec, name, run.batch) for name in names if name in PINNED]
    distinct: dict[tuple[int, ...], str] = {}
    for plan in plans:
        if plan.contexts is not None:
            distinct.setdefault(tuple(plan.contexts), plan.policy)
    measured = run.measure([list(c) for c in distinct], list(distinct.values())) if distinct else []
    results = dict(zip(distinct, measured))
    for plan in plans:
        if plan.contexts is None:
            run.say(f"{plan.policy}: infeasible for this spec ({plan.problem})")
            run.rows.append(Row(plan.policy, None, None, None, None, f"infeasible for this spec: {plan.problem}"))
            continue
        run.rows.append(run.row(plan.policy, plan.contexts, results[tuple(plan.contexts)]))
    run.finalists += [(policy, list(contexts)) for contexts, policy in distinct.items()]
    if OS in names:
        run.rows.append(_unpinned_row(run))


def _unpinned_row(run) -> Row:
    """The unpinned program's row: measured where the oracle can run it, else why not."""
    from tasksolve.simulate.errors import OracleError
    from tasksolve.specs.oracles import noun

    oracle = run.oracle
    if not (callable(getattr(oracle, "unpinned", None)) and callable(getattr(oracle, "measure", None))):
        why = (
            f"not measured: the {noun(run.oracle_kind)} keeps every thread on one context for the whole run, "
            "and an OS scheduler's moving placement has no model here (the command oracle runs it; the "
            "balanced rows are the load balancer's aim)"
        )
        return Row(OS_LABEL, None, None, None, None, why)
    run.say(f"measuring the program unpinned on the {noun(run.oracle_kind)}")
    try:
        measurement = oracle.measure([oracle.unpinned()], [run.seed])[0]
    except OracleError as exc:
        return Row(OS_LABEL, None, None, None, None, f"the program failed when told TASKSOLVE_PINNING=none ({exc})")
    ignored = ignored_by_os(run.spec)
    note = "TASKSOLVE_PINNING=none"
    if ignored:
        note += f"; the OS is not bound by {', '.join(ignored)}: left out of the gain over the policies"
    return Row(OS_LABEL, None, run.natural(measurement), half_width(measurement, run.kind), None, note)


def gain_over_policies(
    spec, rows: Sequence[Row], measurement, objective, ties: Sequence[str] = ()
) -> PolicyGain | None:
    """How much the chosen plan (`measurement`) gains over the best measured policy row
    (`objective` a `specs.objective.Objective`); None when no policy was measured.  On a
    stochastic oracle the chosen plan's figure is the race's (`solver.binding.noisy`), and a policy
    the race could not tell from it (`ties`, finalists' labels) is within the noise."""
    from tasksolve.solver.certify.verdict import beats

    counted = [r for r in rows if r.method in PINNED and r.simulated is not None]
    if not ignored_by_os(spec):
        counted += [r for r in rows if r.method == OS_LABEL and r.simulated is not None]
    if measurement is None or not counted:
        return None
    value = float(objective.score(measurement.value(objective.name)))
    best = max(counted, key=lambda r: objective.score(r.simulated))
    spread = half_width(measurement, objective) or 0.0
    return PolicyGain(
        best=best.method,
        value=float(best.simulated),
        half_width=best.half_width,
        gain=(objective.score(value) - objective.score(best.simulated)) / abs(best.simulated),
        beyond_noise=best.method not in ties
        and beats(value, spread, best.simulated, best.half_width or 0.0, objective.minimize),
        infeasible=[r.method for r in rows if r.method in PINNED and r.contexts is None],
    )
