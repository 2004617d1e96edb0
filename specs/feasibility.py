"""Cheap feasibility checks of a spec's constraints, run when a spec loads (docs/design.md, "Spec
language"): what no placement can satisfy is refused at once, named and located, instead of
after a solver run.

Placement (binding problems).  Threads must go to distinct usable contexts; a pinned thread to
its pin, a thread with ``forbid`` entries to the usable contexts outside them; each domain of a
level in ``max_threads`` holds at most that many threads.  The domains of all levels nest (a
laminar family), so a placement exists iff the maximum flow of this network saturates the
threads (an exact test, not a relaxation)::

    source -> thread group (capacity: its threads) -> allowed context (1)
           -> its domain of the innermost capped level (cap) -> ... outer capped levels (cap)
           -> sink

Threads with the same allowed contexts form one group (every thread without pin or forbid is in
one group), so the network stays small.  When it does not saturate, constraint groups are added
one at a time -- contexts, max_threads (level by level), pins, forbids -- and the first group
that makes the flow fall short is named, with the most threads that fit.

Latency.  No placement is faster than the task graph's critical path at the topology's clock,
each task at its fastest kind of core (`specs.cpu_kinds`; docs/design.md, "Semantics every oracle
shares"): in a binding problem each task is a thread and pays, besides its cycles, the cheapest
cost any placement gives each incoming message (two threads never share a context), and runs at
most at the rate the contention no placement avoids leaves it (`least_slowdown`: in the closed
form every thread loads a machine-wide resource wherever it is, and a thread alone in its domains
still loads its own demand); in a pipeline problem tasks may share a thread, so messages may be
free and only cycles count.  ``latency_max`` below that bound is refused.
"""

from __future__ import annotations

from tasksolve.specs.errors import Problem
from tasksolve.specs.spec import Spec
from tasksolve.specs.topology import MACHINE

# Above this many thread-to-context arcs the placement check is skipped (a spec that large has
# thousands of forbid entries; the solvers still name a conflict).
MAX_ARCS = 4_000_000


# --------------------------------------------------------------------- placement
def _allowed_groups(spec: Spec, pins: bool, forbids: bool) -> list[tuple[int, list[int]]]:
    """(number of threads, allowed contexts) per group of threads with the same allowed set."""
    topo = spec.topology
    cons = spec.constraints
    usable = spec.usable_contexts
    groups: dict[tuple, int] = {}
    free = 0
    for name in spec.thread_names:
        if pins and name in cons.pin:
            key: tuple = ("pin", topo.parse_context(cons.pin[name]))
        elif forbids and cons.forbid.get(name):
            avoided: set[int] = set()
            for domain in cons.forbid[name]:
                avoided.update(topo.contexts_of(*topo.parse_domain(domain)))
            key = ("forbid", frozenset(avoided))
        else:
            free += 1
            continue
        groups[key] = groups.get(key, 0) + 1
    out = [(free, list(usable))] if free else []
    for key, size in groups.items():
        if key[0] == "pin":
            out.append((size, [key[1]] if key[1] in set(usable) else []))
        else:
            out.append((size, [c for c in usable if c not in key[1]]))
    return out


def placeable(spec: Spec, caps: dict[str, int], pins: bool = True, forbids: bool = True) -> int | None:
    """The most threads of `spec` that can be placed under the given caps (level -> at most that
    many threads per domain), pins and forbids; None when the network would be too large."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    topo = spec.topology
    groups = _allowed_groups(spec, pins, forbids)
    if sum(len(allowed) for _, allowed in groups) > MAX_ARCS:
        return None
    usable = spec.usable_contexts
    levels = sorted((topo.level_index(name) if name != MACHINE else -1, cap) for name, cap in caps.items())
    levels.reverse()  # innermost first; the machine (-1) last
    source, sink = 0, 1
    node = 2 + len(groups)
    context_node = {c: node + i for i, c in enumerate(usable)}
    node += len(usable)
    rows: list[int] = []
    cols: list[int] = []
    caps_out: list[int] = []

    def arc(a: int, b: int, capacity: int) -> None:
        rows.append(a)
        cols.append(b)
        caps_out.append(int(min(capacity, 2**30)))

    for g, (size, allowed) in enumerate(groups):
        arc(source, 2 + g, size)
        for c in allowed:
            arc(2 + g, context_node[c], 1)
    current = dict(context_node)  # context -> the node its flow has reached
    for level, cap in levels:
        inner: dict[int, int] = {}
        outer: dict[int, int] = {}
        links: set[tuple[int, int]] = set()
        for c in usable:
            d = 0 if level < 0 else topo.domain_of(c, level)
            if d not in inner:
                inner[d], outer[d] = node, node + 1
                arc(node, node + 1, cap)
                node += 2
            links.add((current[c], inner[d]))
            current[c] = outer[d]
        for a, b in sorted(links):
            arc(a, b, len(usable))
    for n in set(current.values()):
        arc(n, sink, len(usable))
    graph = csr_matrix((np.array(caps_out, dtype=np.int32), (rows, cols)), shape=(node, node))
    graph.sum_duplicates()
    return int(maximum_flow(graph, source, sink).flow_value)


def _caps_text(caps: dict[str, int]) -> str:
    return ", ".join(f"{level}: {cap}" for level, cap in caps.items())


def check_placement(spec: Spec) -> list[Problem]:
    """One problem naming the constraint that leaves no placement, or none (module docstring)."""
    if spec.problem != "binding":
        return []
    cons = spec.constraints
    threads = len(spec.threads)
    if not (cons.max_threads or cons.pin or cons.forbid):
        return []  # distinct usable contexts alone: `specs.checks` compared the counts
    if placeable(spec, dict(cons.max_threads), True, True) in (None, threads):
        return []
    where = "constraints.contexts" if cons.contexts is not None else "the topology"
    caps: dict[str, int] = {}
    for level, cap in cons.max_threads.items():
        caps[level] = cap
        most = placeable(spec, caps, pins=False, forbids=False)
        if most is not None and most < threads:
            return [
                Problem(
                    ("constraints", "max_threads", level),
                    f"max_threads {{{_caps_text(caps)}}} leaves room for {most} of the {threads} threads "
                    f"in the {len(spec.usable_contexts)} contexts of {where}",
                )
            ]
    most = placeable(spec, caps, pins=True, forbids=False)
    if most is not None and most < threads:
        also = f" with max_threads {{{_caps_text(caps)}}}" if caps else ""
        return [
            Problem(
                ("constraints", "pin"),
                f"with these pins{also}, only {most} of the {threads} threads can be placed in the contexts of {where}",
            )
        ]
    most = placeable(spec, caps, pins=True, forbids=True) or 0
    also = " and ".join(name for name, given in (("the pins", cons.pin), ("max_threads", caps)) if given)
    also = f" (and {also})" if also else ""
    return [
        Problem(
            ("constraints", "forbid"),
            f"with these forbids{also}, only {most} of the {threads} threads can be placed in the contexts of {where}",
        )
    ]


# --------------------------------------------------------------------- latency
def _cheapest_message(spec: Spec, size: int) -> float:
    """The least a consumer can pay for one message: over every level two distinct contexts may
    share (never the innermost level, the context itself)."""
    topo = spec.topology
    levels = range(-1, len(topo.level_names) - 1)
    return min(topo.message_cycles(level, size) for level in levels)


def machine_loads(spec: Spec) -> dict[str, float]:
    """Each machine-wide resource's load in the closed form: the whole workload's demand on it,
    wherever the threads run."""
    apps = spec.applications
    return {
        r.name: sum(apps[t.app].tasks[t.task].demand.get(r.name, 0.0) for t in spec.threads)
        for r in spec.topology.resources
        if r.level == MACHINE
    }


def least_slowdown(spec: Spec, app_name: str, task: str, machine: dict[str, float]) -> tuple[float, str | None]:
    """The least ``1 / rate`` a thread of `task` has in any binding placement on the closed form,
    and the resource that sets it: ``max(1, load / capacity)`` over the resources it loads, the
    load of a machine-wide one being `machine`'s (`machine_loads`), of any other its own demand."""
    demand = spec.applications[app_name].tasks[task].demand
    worst, which = 1.0, None
    for resource in spec.topology.resources:
        own = demand.get(resource.name, 0.0)
        if own <= 0:
            continue
        load = machine.get(resource.name, own)
        if load / resource.capacity > worst:
            worst, which = load / resource.capacity, resource.name
    return worst, which


def critical_path(spec: Spec, app_name: str, machine: dict[str, float] | None = None) -> tuple[float, list[str]]:
    """Cycles of the longest entry-to-exit path of `app_name` at the least contention any plan has
    (module docstring), and the path."""
    from tasksolve.specs.kind_work import kind_work

    app = spec.applications[app_name]
    topo = spec.topology
    binding = spec.problem == "binding"
    if machine is None:
        machine = machine_loads(spec) if binding else {}
    longest: dict[str, float] = {}  # when the task finishes
    emit: dict[str, float] = {}  # when its messages leave (before it finishes with an early signal)
    before: dict[str, str | None] = {}
    for task in app.topological_order:
        spec_task = app.tasks[task]
        cycles = min(kind_work(spec_task, topo.kind_names, topo))
        comm, slow = 0.0, 1.0
        if binding:
            comm = sum(_cheapest_message(spec, app.edge_bytes(p, task)) for p in app.predecessors[task])
            slow = least_slowdown(spec, app_name, task, machine)[0]
        start, via = 0.0, None
        for p in app.predecessors[task]:
            if emit[p] > start:
                start, via = emit[p], p
        longest[task] = start + (cycles + comm) * slow
        # NPIRE §2.6: messages leave after `signal` of the cycles (`simulate.locks.unsent`)
        sent = cycles if spec_task.signal is None else spec_task.signal * cycles
        emit[task] = start + (sent + comm) * slow
        before[task] = via
    end = max(app.exits, key=longest.__getitem__)  # a latency ends at an exit (an early signal lets it end first)
    path = [end]
    while before[path[-1]] is not None:
        path.append(before[path[-1]])  # type: ignore[arg-type]
    return longest[end], path[::-1]


def check_latency(spec: Spec) -> list[Problem]:
    bound = spec.constraints.latency_max
    if bound is None:
        return []
    clock = spec.topology.clock
    limit = bound.to_cycles(clock)
    machine = machine_loads(spec) if spec.problem == "binding" else {}
    worst = max(((critical_path(spec, item.app, machine), item.app) for item in spec.workload), key=lambda x: x[0][0])
    (cycles, path), app = worst
    if limit >= cycles * (1 - 1e-9):
        return []
    from tasksolve.specs.display import frequency, seconds

    messages = " and the cheapest message costs" if spec.problem == "binding" else ""
    if spec.problem == "binding":
        slowed = {which for task in path if (which := least_slowdown(spec, app, task, machine)[1]) is not None}
        if slowed:
            messages += f", slowed by the load no placement avoids on {', '.join(sorted(slowed))}"
    kinds = " on the fastest kind of core" if spec.topology.kinds else ""
    given = f"{limit:.6g} cycles" if bound.unit == "cycles" else f"{bound} ({limit:.6g} cycles at {frequency(clock)})"
    return [
        Problem(
            ("constraints", "latency_max"),
            f"latency_max {given} is below the shortest latency "
            f"any placement reaches: the critical path of `{app}` ({' -> '.join(path)}) takes "
            f"{cycles:.6g} cycles ({seconds(cycles / clock)}) with its cycles{kinds}{messages}",
        )
    ]


def check_feasibility(spec: Spec) -> list[Problem]:
    """Every cheap feasibility check; call after `specs.checks.check_spec` found nothing."""
    return check_placement(spec) + check_latency(spec)
