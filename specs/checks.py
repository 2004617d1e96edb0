"""Cross-checks of a spec that types alone cannot express.

Each function returns a list of `Problem` (field path + message); `specs.loader` locates them in
the file.  Checked: level/resource names, communication keys, task-graph references, cycles and a
single entry per application, demands against known resources, workload references, and every
constraint (domains exist, pins name existing, allowed, distinct contexts, caps name levels,
enough usable contexts for the threads).
"""

from __future__ import annotations

from collections import Counter

from tasksolve.specs.application import Application
from tasksolve.specs.errors import Problem, did_you_mean
from tasksolve.specs.kind_checks import check_kinds, check_shape, check_task_kinds
from tasksolve.specs.measured import check_measured
from tasksolve.specs.spec import Spec
from tasksolve.specs.topology import MACHINE, CacheCommunication, DirectCommunication, Topology


def check_topology(topo: Topology, prefix: tuple = ()) -> list[Problem]:
    """Every problem of a topology: its levels, its resources, ``os_cpus`` and its
    communication costs (each located under `prefix`)."""
    shape = check_shape(topo, prefix)
    if shape:  # the rest reads domains of the tree
        return shape
    problems = _check_levels(topo, prefix) + _check_resources(topo, prefix) + _check_os_cpus(topo, prefix)
    problems += _check_usable(topo, prefix) + _check_devices(topo, prefix) + check_kinds(topo, prefix)
    comm = topo.communication
    if isinstance(comm, DirectCommunication):
        problems.extend(_check_direct_costs(topo, comm, prefix))
    elif isinstance(comm, CacheCommunication):
        problems.extend(_check_cache_model(topo, comm, prefix))
    return problems


def _check_levels(topo: Topology, prefix: tuple) -> list[Problem]:
    """Level names are unique and never `machine`; the context count is one tasksolve handles."""
    problems: list[Problem] = []
    names = topo.level_names
    for index, name in enumerate(names):
        if name == MACHINE:
            problems.append(
                Problem(
                    prefix + ("levels", index, "name"),
                    "`machine` is the implicit root level; give the levels inside it",
                )
            )
        elif names.index(name) != index:
            problems.append(Problem(prefix + ("levels", index, "name"), f"level `{name}` is given twice"))
    if topo.n_contexts > 65_536:
        problems.append(
            Problem(prefix + ("levels",), f"{topo.n_contexts} hardware contexts is more than tasksolve handles (65536)")
        )
    return problems


def _check_resources(topo: Topology, prefix: tuple) -> list[Problem]:
    """Resource names are unique and each sits at a known level."""
    problems: list[Problem] = []
    known_levels = topo.level_names + [MACHINE]
    seen: set[str] = set()
    for index, resource in enumerate(topo.resources):
        if resource.name in seen:
            problems.append(
                Problem(prefix + ("resources", index, "name"), f"resource `{resource.name}` is given twice")
            )
        seen.add(resource.name)
        if resource.level not in known_levels:
            problems.append(
                Problem(
                    prefix + ("resources", index, "level"),
                    f"unknown level `{resource.level}` (levels: {', '.join(known_levels)})"
                    f"{did_you_mean(resource.level, known_levels)}",
                )
            )
    return problems


def _check_direct_costs(topo: Topology, comm: DirectCommunication, prefix: tuple) -> list[Problem]:
    """Direct costs are keyed by the shared levels, one for each."""
    problems: list[Problem] = []
    names = topo.level_names
    shared = topo.shared_level_names
    for key in comm.cycles:
        if key not in shared:
            hint = (
                f"; `{key}` is the hardware context: two threads never share one"
                if key == names[-1]
                else did_you_mean(key, shared)
            )
            problems.append(
                Problem(
                    prefix + ("communication", key),
                    f"unknown level `{key}` (costs are keyed by {', '.join(shared)}){hint}",
                    key=True,
                )
            )
    missing = [level for level in shared if level not in comm.cycles]
    if missing:
        problems.append(
            Problem(
                prefix + ("communication",),
                f"no cost given for {', '.join(f'`{m}`' for m in missing)}; "
                f"give cycles per message for each of {', '.join(shared)}",
            )
        )
    return problems


def _check_cache_model(topo: Topology, comm: CacheCommunication, prefix: tuple) -> list[Problem]:
    """The cache model's tables are keyed by known levels, with main memory and a positive line."""
    problems: list[Problem] = []
    known_levels = topo.level_names + [MACHINE]
    for table in ("latency", "hit_rate"):
        for key in getattr(comm, table):
            if key not in known_levels:
                problems.append(
                    Problem(
                        prefix + ("communication", table, key),
                        f"unknown level `{key}`{did_you_mean(key, known_levels)}",
                        key=True,
                    )
                )
    if MACHINE not in comm.latency:
        problems.append(
            Problem(
                prefix + ("communication", "latency"),
                "the cache model needs `machine` (main-memory latency in cycles)",
            )
        )
    if comm.line <= 0:
        problems.append(Problem(prefix + ("communication", "line"), "the line size must be positive"))
    return problems


def _check_os_cpus(topo: Topology, prefix: tuple) -> list[Problem]:
    """``os_cpus`` names every context once, each with its own CPU number."""
    if topo.os_cpus is None:
        return []
    problems: list[Problem] = []
    seen_contexts: set[int] = set()
    owner: dict[int, str] = {}
    for name, cpu in topo.os_cpus.items():
        try:
            context = topo.parse_context(name)
        except ValueError as exc:
            problems.append(Problem(prefix + ("os_cpus", name), str(exc), key=True))
            continue
        if context in seen_contexts:
            problems.append(Problem(prefix + ("os_cpus", name), f"context `{name}` is given twice", key=True))
        seen_contexts.add(context)
        if cpu in owner:
            problems.append(Problem(prefix + ("os_cpus", name), f"CPU {cpu} is already the CPU of `{owner[cpu]}`"))
        owner.setdefault(cpu, name)
    absent = [c for c in topo.present_contexts if c not in seen_contexts]
    missing = len(absent)
    if missing and not problems:
        first = absent[0]
        problems.append(
            Problem(
                prefix + ("os_cpus",),
                f"{missing} context(s) have no CPU number, e.g. `{topo.context_name(first)}`; give every context one",
            )
        )
    return problems


def _check_usable(topo: Topology, prefix: tuple) -> list[Problem]:
    """``usable`` names existing domains, at least one."""
    if topo.usable is None:
        return []
    if not topo.usable:
        return [Problem(prefix + ("usable",), "the list of usable domains is empty; leave it out to use every context")]
    problems: list[Problem] = []
    for index, name in enumerate(topo.usable):
        try:
            topo.parse_domain(name)
        except ValueError as exc:
            problems.append(Problem(prefix + ("usable", index), str(exc)))
    return problems


def _check_devices(topo: Topology, prefix: tuple) -> list[Problem]:
    """Every device hangs off a domain that exists (`specs.devices`)."""
    problems: list[Problem] = []
    for name, device in (topo.devices or {}).items():
        try:
            topo.parse_domain(device.at)
        except ValueError as exc:
            problems.append(Problem(prefix + ("devices", name, "at"), str(exc)))
    return problems


def _task_devices(spec: Spec) -> list[Problem]:
    """A task's `device` names a device of the topology."""
    known = spec.topology.devices or {}
    return [
        Problem(
            ("applications", app_name, "tasks", name, "device"),
            f"unknown device `{task.device.name}`{did_you_mean(task.device.name, known)}"
            + ("" if known else "; the topology has no `devices`"),
        )
        for app_name, app in spec.applications.items()
        for name, task in app.tasks.items()
        if task.device is not None and task.device.name not in known
    ]


def check_application(app_name: str, app: Application, resources: list[str] | None, base: tuple = ()) -> list[Problem]:
    """One task graph: demands name known resources (skipped when `resources` is None, for an
    application file checked on its own), edges name tasks, no self-loop, no repeated edge, no
    cycle, one entry task."""
    problems: list[Problem] = []
    for task_name, task in app.tasks.items():
        for table in ("demand", "idle_demand"):
            for resource in getattr(task, table):
                if resources is not None and resource not in resources:
                    known = (
                        f" (resources: {', '.join(resources)})"
                        if resources
                        else " (the topology declares no resources)"
                    )
                    problems.append(
                        Problem(
                            base + ("tasks", task_name, table, resource),
                            f"unknown resource `{resource}` in {app_name}.{task_name}.{table}{known}"
                            f"{did_you_mean(resource, resources)}",
                            key=True,
                        )
                    )
    pairs: Counter = Counter()
    for index, edge in enumerate(app.edges):
        for end, field in ((edge.source, "from"), (edge.target, "to")):
            if end not in app.tasks:
                problems.append(
                    Problem(
                        base + ("edges", index, field),
                        f"unknown task `{end}` in application `{app_name}`{did_you_mean(end, app.tasks)}",
                    )
                )
        if edge.source == edge.target:
            problems.append(Problem(base + ("edges", index), f"edge from `{edge.source}` to itself"))
        pairs[(edge.source, edge.target)] += 1
        if pairs[(edge.source, edge.target)] == 2:
            problems.append(Problem(base + ("edges", index), f"edge {edge.source} -> {edge.target} is given twice"))
    if problems:
        return problems
    cycle = app.find_cycle()
    if cycle:
        return [Problem(base + ("edges",), f"the task graph of `{app_name}` has a cycle: {' -> '.join(cycle)}")]
    if len(app.entries) != 1:
        return [
            Problem(
                base + ("tasks",),
                f"application `{app_name}` must have exactly one entry task (with no incoming edge); "
                f"it has {len(app.entries)}: {', '.join(app.entries)}",
            )
        ]
    return _check_npire(app_name, app, base)


def _check_npire(app_name: str, app: Application, base: tuple) -> list[Problem]:
    """Critical sections and early signals (NPIRE §2.4, §2.6, §2.7): a section no longer than its
    task, a speculation that can succeed, a signal only where a message leaves and never inside a
    held lock (the thread would hold it while blocked on a full queue)."""
    problems: list[Problem] = []
    for name, task in app.tasks.items():
        where = base + ("tasks", name)
        crit = task.critical
        if crit is not None and task.critical_cycles > task.cycles:
            problems.append(
                Problem(
                    where + ("critical", "cycles"),
                    f"{app_name}.{name}: the critical section ({task.critical_cycles:g} cycles) is longer than "
                    f"the task ({task.cycles:g} cycles)",
                )
            )
        if crit is not None and crit.speculate is not None and crit.speculate >= 1:
            problems.append(
                Problem(where + ("critical", "speculate"), f"{app_name}.{name}: a speculation that always fails")
            )
        if task.signal is None:
            continue
        if not app.successors[name]:
            problems.append(
                Problem(where + ("signal",), f"{app_name}.{name}: an exit task sends no message to signal early")
            )
        elif (
            crit is not None
            and crit.speculate is None
            and task.signal * task.cycles > task.cycles - task.critical_cycles
        ):
            problems.append(
                Problem(
                    where + ("signal",),
                    f"{app_name}.{name}: the signal falls inside the critical section of `{crit.lock}` (its last "
                    f"{task.critical_cycles:g} cycles); signal at most {1 - task.critical_cycles / task.cycles:.4g}",
                )
            )
    return problems


def check_applications(spec: Spec) -> list[Problem]:
    resources = spec.topology.resource_names
    return (
        [
            problem
            for app_name, app in spec.applications.items()
            for problem in check_application(app_name, app, resources, ("applications", app_name))
        ]
        + check_task_kinds(spec)
        + _task_devices(spec)
    )


def _pipeline_replicas(spec: Spec) -> list[Problem]:
    """In a pipeline spec `replicas: N` fixes the replicas of the stage running the task
    (`solver.pipeline.candidates`), every distinct count some stage's on every instance: refused
    when those threads exceed the usable contexts.  A stage's replicas take packets in turn (the
    pipeline closed form and simulation model round robin only): `dispatch: hash` is refused."""
    if spec.problem != "pipeline":
        return []
    problems, usable = [], len(spec.usable_contexts)
    for app_name, app in spec.applications.items():
        where = ("applications", app_name, "tasks")
        problems += [
            Problem(
                where + (name, "dispatch"),
                f"`{app_name}.{name}`: a pipeline stage's replicas take packets in turn (round robin), the only "
                "dispatch the pipeline methods model; `dispatch: hash` is for binding specs (`problem: binding`)",
            )
            for name, task in app.tasks.items()
            if task.dispatch == "hash"
        ]
        fixed = {name: task.replicas for name, task in app.tasks.items() if task.replicas > 1}
        instances = spec.instance_count(app_name)
        need = instances * sum(set(fixed.values()))
        if fixed and need > usable:
            name = max(fixed, key=lambda t: fixed[t])
            counts = " + ".join(str(c) for c in sorted(set(fixed.values()), reverse=True))
            each = f"{instances} instances x ({counts})" if instances > 1 else counts
            message = (
                f"`{app_name}.{name}` fixes its stage at {fixed[name]} replicas: the fixed counts need at least "
                f"{each} = {need} threads (each count a stage of its own), the spec has {usable} usable contexts"
            )
            problems.append(Problem(where + (name, "replicas"), message))
    return problems


def check_workload(spec: Spec) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(spec.workload):
        if item.app not in spec.applications:
            problems.append(
                Problem(
                    ("workload", index, "app"),
                    f"unknown application `{item.app}`{did_you_mean(item.app, spec.applications)}",
                )
            )
        elif item.app in seen:
            problems.append(
                Problem(
                    ("workload", index, "app"),
                    f"application `{item.app}` is listed twice (first as workload[{seen[item.app]}]); "
                    "add the instances together",
                )
            )
        seen.setdefault(item.app, index)
    return problems


def _domain(spec: Spec, text: str, path: tuple, problems: list[Problem]) -> tuple[int, int] | None:
    try:
        return spec.topology.parse_domain(text)
    except ValueError as exc:
        problems.append(Problem(path, str(exc)))
        return None


def check_constraints(spec: Spec) -> list[Problem]:
    problems: list[Problem] = []
    topo = spec.topology
    cons = spec.constraints
    base = ("constraints",)
    if cons.contexts is not None:
        if not cons.contexts:
            problems.append(Problem(base + ("contexts",), "the list of usable domains is empty"))
        for index, name in enumerate(cons.contexts):
            _domain(spec, name, base + ("contexts", index), problems)
        if problems:
            return problems
    usable = set(spec.usable_contexts)

    forbidden: dict[str, set[int]] = {}
    for thread, domains in cons.forbid.items():
        try:
            spec.parse_thread(thread)
        except ValueError as exc:
            problems.append(Problem(base + ("forbid", thread), str(exc), key=True))
            continue
        for index, name in enumerate(domains):
            found = _domain(spec, name, base + ("forbid", thread, index), problems)
            if found:
                forbidden.setdefault(thread, set()).update(topo.contexts_of(*found))

    pinned_at: dict[int, str] = {}
    for thread, context_name in cons.pin.items():
        path = base + ("pin", thread)
        try:
            spec.parse_thread(thread)
        except ValueError as exc:
            problems.append(Problem(path, str(exc), key=True))
            continue
        try:
            context = topo.parse_context(context_name)
        except ValueError as exc:
            problems.append(Problem(path, str(exc)))
            continue
        if context not in usable:
            problems.append(
                Problem(path, f"`{thread}` is pinned to `{context_name}`, which is outside {spec.usable_limits}")
            )
        elif context in forbidden.get(thread, set()):
            problems.append(
                Problem(path, f"`{thread}` is pinned to `{context_name}`, which constraints.forbid excludes for it")
            )
        elif context in pinned_at:
            problems.append(
                Problem(
                    path,
                    f"`{context_name}` is already the pin of `{pinned_at[context]}`; "
                    "a hardware context runs one thread",
                )
            )
        else:
            pinned_at[context] = thread

    for level in cons.max_threads:
        if level not in topo.level_names and level != "machine":
            known = topo.level_names + ["machine"]
            problems.append(
                Problem(base + ("max_threads", level), f"unknown level `{level}`{did_you_mean(level, known)}", key=True)
            )

    threads = len(spec.threads)
    if spec.problem == "binding" and threads > len(usable):
        where = "usable " if cons.contexts is not None or topo.usable is not None else ""
        problems.append(
            Problem(
                ("workload",),
                f"the workload has {threads} threads but only {len(usable)} {where}hardware contexts; "
                "each thread needs its own context",
            )
        )
    for thread, contexts in forbidden.items():
        if not usable - contexts:
            problems.append(Problem(base + ("forbid", thread), f"`{thread}` is forbidden from every usable context"))
    return problems


def check_oracle(spec: Spec) -> list[Problem]:
    """``{cpu:THREAD}`` placeholders of a command oracle name threads of the spec (binding
    problems; a pipeline plan names its own threads).  The placeholder syntax is the command
    oracle's (`specs.placeholders`)."""
    command = spec.oracle.command
    if not command or spec.problem != "binding":
        return []
    from tasksolve.specs.placeholders import thread_placeholders

    names = spec.thread_names
    problems = []
    for index, element in enumerate(command):
        for name in thread_placeholders([element]):
            if name not in names:
                problems.append(
                    Problem(
                        ("oracle", "command", index),
                        f"placeholder {{cpu:{name}}} names no thread of the spec{did_you_mean(name, names)}",
                    )
                )
    return problems


def check_spec(spec: Spec) -> list[Problem]:
    """All cross-checks, in the order a reader meets the sections."""
    problems = check_topology(spec.topology, ("topology",))
    if problems:
        return problems
    problems = check_applications(spec) + check_workload(spec)
    if problems:
        return problems
    problems = check_measured(spec)  # GB/s, MiB, Mpps: `specs.measured`
    if problems:
        return problems
    return check_constraints(spec) + check_oracle(spec) or _pipeline_replicas(spec)
