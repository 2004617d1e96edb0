"""Hypothesis strategies for valid tasksolve specs, for property-testing tools built on tasksolve.

Every strategy draws plain data (what ``yaml.safe_load`` would return), so it can be written to a
file, mutated, or loaded with `specs.load_spec_text`::

    from hypothesis import given
    from tasksolve.specs import strategies as st_specs

    @given(st_specs.spec_data())
    def test_my_tool(data):
        spec = st_specs.load(data)      # a checked `specs.Spec`
        ...

`topology_data`, `application_data(resources)`, `spec_data` and `binding_plans(spec)` are the
building blocks.  With ``every_field=True`` they also draw every field that changes work or load
(`frequency`, `idle_demand`, `critical` sections with speculation, `signal`, `code_size` with a
topology `icache`, capacities and demands across their accepted range, down to 1e-300, the usable
contexts on the topology's `usable` list as an imported host has them, beside `constraints.contexts`,
kinds of core (0-3, with a `speed` or a `clock` and an `ipc`, and tasks' `cycles` given per kind
now and then: `specs.cpu_kinds`) and irregular trees (a level's `count` given per domain above):
what the property tests of every bound draw from.  ``kinds=True`` and ``irregular=True`` draw these
two without the rest (``kinds=True``: 1-3 kinds, always).  ``measured=True`` draws capacities in
GB/s, Gb/s, MiB and Gpps now and then, and demands in bytes and packets on them (`MEASURED`,
`specs.measured`).  Sizes always carry their unit (``64B``), as a spec file must.  Requires the ``hypothesis`` package (the ``test``
extra).
"""

from __future__ import annotations

import math
from typing import Any

import yaml
from hypothesis import assume
from hypothesis import strategies as st

from tasksolve.specs.spec import Spec

LEVEL_NAMES = ["socket", "core", "pipe", "strand", "smt", "die", "ccx"]


def _frequency_text(hz_mhz: int) -> Any:
    return st.sampled_from([f"{hz_mhz}MHz", hz_mhz * 1_000_000, f"{hz_mhz / 1000}GHz"])


#: capacities across the accepted range (0, 1e6]: odd values without a small common multiple,
#: and tiny ones no integer scale of thousandths can hold
WIDE_CAPACITIES = [1e-300, 1e-12, 1e-4, 1e-3, 0.37, 0.5, 1.0, 1.05, 1.27, 2.0, 4.0, 1e6]
#: demands with more digits than thousandths, and below a thousandth
WIDE_DEMANDS = [0.0, 0.0004, 0.1, 0.1234, 0.35, 0.4, 0.9, 1.0]
#: measured capacities (``measured=True``, `specs.measured`), each with measured demands whose shares
#: stay at most 1 on any drawn task (6.25 cycles a packet at 4GHz at the fastest: 6.4e8 packets/s)
MEASURED = {
    "200GB/s": ["64B", "300B"],
    "100Gb/s": ["8B", "16B"],
    "32MiB": ["1MiB", "8MiB", "32MiB"],
    "1Gpps": ["1packet"],
}
#: sizes of messages, with their units (a spec file must give them one)
SIZES = [0, "64B", "1KiB", "1500B"]


#: the names of the kinds of core drawn (the first kinds of a hybrid processor)
KIND_NAMES = ["P", "E", "LP"]
#: cycles a task may take (also per kind of core)
CYCLES = [50, 100, 180.5, 600, 1200]


def _tree(draw, names: list[str], counts: list[int], irregular: bool) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The levels (a level's `count` maybe a list, one count per existing domain above, each at
    most `counts[k]`) and, per level, the paths of its existing domains in index order."""
    levels: list[dict[str, Any]] = []
    by_level: list[list[str]] = []
    domains = [""]
    for name, width in zip(names, counts):
        count: int | list[int] = width
        if irregular and draw(st.booleans()):
            count = draw(st.lists(st.integers(1, width), min_size=len(domains), max_size=len(domains)))
        per = count if isinstance(count, list) else [count] * len(domains)
        domains = [f"{p}.{name}{i}" if p else f"{name}{i}" for p, n in zip(domains, per) for i in range(n)]
        levels.append({"name": name, "count": count})
        by_level.append(domains)
    return levels, by_level


def _kinds(draw, by_level: list[list[str]], mhz: int, least: int) -> dict[str, Any] | None:
    """0-3 kinds of core (at least `least`) over the existing domains of one level: each kind
    names its domains, or one kind leaves `domains` out and takes the rest; a `speed` or a
    `clock` or neither, and an `ipc` now and then."""
    level = draw(st.integers(0, len(by_level) - 1))
    domains = by_level[level]
    n = min(draw(st.integers(least, 3)), len(domains))
    if n == 0:
        return None
    owner = list(draw(st.permutations(range(n)))) + draw(
        st.lists(st.integers(0, n - 1), min_size=len(domains) - n, max_size=len(domains) - n)
    )
    owner = draw(st.permutations(owner))  # every kind holds at least one domain
    rest = draw(st.sampled_from([None, *range(n)]))
    kinds: dict[str, Any] = {}
    for k in range(n):
        kind: dict[str, Any] = {}
        form = draw(st.sampled_from(["none", "speed", "clock"]))
        if form == "speed":
            kind["speed"] = draw(st.sampled_from([0.5, 0.75, 1, 1.6]))
        elif form == "clock":
            kind["clock"] = f"{round(mhz * draw(st.sampled_from([0.6, 1.0, 1.25])))}MHz"
        if draw(st.booleans()):
            kind["ipc"] = draw(st.sampled_from([0.5, 0.75, 1.25]))
        if k != rest:
            kind["domains"] = [d for d, o in zip(domains, owner) if o == k]
        kinds[KIND_NAMES[k]] = kind
    return kinds


@st.composite
def topology_data(
    draw,
    max_levels: int = 3,
    max_contexts: int = 16,
    every_field: bool = False,
    kinds: bool | None = None,
    irregular: bool | None = None,
    measured: bool = False,
) -> dict[str, Any]:
    """A valid topology mapping: 1..max_levels levels, at most `max_contexts` contexts
    (`every_field`: capacities from `WIDE_CAPACITIES`, an `icache`, kinds of core, level counts
    per domain above; `kinds`, `irregular`: those two alone, see the module docstring;
    `measured`: now and then a capacity of `MEASURED`)."""
    least = 1 if kinds else 0  # asked for kinds: at least one
    kinds = every_field if kinds is None else kinds
    irregular = every_field if irregular is None else irregular
    depth = draw(st.integers(1, max_levels))
    names = draw(st.lists(st.sampled_from(LEVEL_NAMES), min_size=depth, max_size=depth, unique=True))
    counts: list[int] = []
    budget = max_contexts
    for _ in range(depth):
        count = draw(st.integers(1, max(1, min(4, budget))))
        counts.append(count)
        budget = max(1, budget // count)
    assume(math.prod(counts) <= max_contexts)
    levels, by_level = _tree(draw, names, counts, irregular)
    resource_levels = names + ["machine"]
    resources = []
    for index in range(draw(st.integers(0, 3))):
        resources.append(
            {
                "name": f"r{index}",
                "level": draw(st.sampled_from(resource_levels)),
                "capacity": draw(st.sampled_from(WIDE_CAPACITIES if every_field else [0.5, 1.0, 2.0, 4.0])),
            }
        )
        if measured and draw(st.booleans()):
            resources[-1]["capacity"] = draw(st.sampled_from(list(MEASURED)))
    shared = list(reversed(names[:-1])) + ["machine"]
    mhz = draw(st.integers(100, 4000))
    data: dict[str, Any] = {
        "name": draw(st.sampled_from(["box", "Test CPU", "t"])),
        "clock": draw(_frequency_text(mhz)),
        "levels": levels,
        "resources": resources,
    }
    if every_field and draw(st.booleans()):
        data["icache"] = draw(st.sampled_from([400, 1000, 5000]))
    if kinds:
        drawn = _kinds(draw, by_level, mhz, least)
        if drawn:
            data["kinds"] = drawn
    form = draw(st.sampled_from(["none", "direct", "cache"]))
    if form == "direct":
        data["communication"] = {level: draw(st.integers(0, 300)) for level in shared}
    elif form == "cache":
        latency = {level: draw(st.integers(1, 300)) for level in shared}
        hit = {level: draw(st.sampled_from([0.0, 0.5, 0.9, 1.0])) for level in shared if level != "machine"}
        data["communication"] = {
            "model": "cache",
            "line": draw(st.sampled_from(["64B", "32B", "128B"])),
            "latency": latency,
            "hit_rate": hit,
        }
    if draw(st.booleans()):  # OS CPU numbers, as an imported host has: any distinct numbers
        paths = by_level[-1]
        numbers = draw(st.permutations(range(len(paths))))
        data["os_cpus"] = {path: 2 * number for path, number in zip(paths, numbers)}
    return data


def _every_task_field(draw, task: dict[str, Any], resources: list[str]) -> None:
    """`frequency`, `code_size` and a `critical` section (maybe speculative, maybe with conflicts)."""
    if draw(st.booleans()):
        task["frequency"] = draw(st.sampled_from([0.25, 0.5, 1, 2.5]))
    if draw(st.booleans()):
        task["code_size"] = draw(st.sampled_from([100, 300, 900]))
    if draw(st.booleans()):
        critical: dict[str, Any] = {"lock": draw(st.sampled_from(["heap", "table"]))}
        if draw(st.booleans()):
            critical["cycles"] = draw(st.sampled_from(["25%", "100%", 20]))
        if draw(st.booleans()):
            critical["speculate"] = draw(st.sampled_from([0.1, 0.5, 0]))
            critical["rollback"] = draw(st.sampled_from([0, 40]))
            if draw(st.booleans()):  # failures that grow with the other threads' commits
                critical["conflict"] = draw(st.sampled_from([0.3, 1.0]))
        task["critical"] = critical


def _measured_demands(draw, task: dict[str, Any], capacities: dict[str, Any]) -> None:
    """Now and then a measured demand (`MEASURED`) on a resource with a measured capacity; an
    idle one only as a working set (a waiting task moves no packets)."""
    for table in ("demand", "idle_demand"):
        for resource in task.get(table, {}):
            options = MEASURED.get(str(capacities.get(resource)))
            if options and (table == "demand" or options[0].endswith("iB")) and draw(st.booleans()):
                task[table][resource] = draw(st.sampled_from(options))


@st.composite
def application_data(
    draw, resources: list[str], max_tasks: int = 5, every_field: bool = False, capacities: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A valid task graph: task t0 is the single entry; every other task has a predecessor
    (`every_field`: demands from `WIDE_DEMANDS`, and every field of `_every_task_field`;
    `capacities`: the resources' capacities, measured demands drawn on measured ones)."""
    n = draw(st.integers(1, max_tasks))
    tasks: dict[str, Any] = {}
    demands = WIDE_DEMANDS if every_field else [0.0, 0.1, 0.4, 0.9, 1.0]
    for index in range(n):
        task: dict[str, Any] = {"cycles": draw(st.sampled_from(CYCLES))}
        if resources:
            chosen = draw(st.lists(st.sampled_from(resources), unique=True, max_size=len(resources)))
            if chosen:
                task["demand"] = {r: draw(st.sampled_from(demands)) for r in chosen}
            idle = draw(st.lists(st.sampled_from(resources), unique=True, max_size=1))
            if idle:
                task["idle_demand"] = dict.fromkeys(idle, draw(st.sampled_from(demands)) if every_field else 0.3)
        if every_field:
            _every_task_field(draw, task, resources)
        if capacities:
            _measured_demands(draw, task, capacities)
        tasks[f"t{index}"] = task
    edges = []
    for index in range(1, n):
        preds = draw(st.lists(st.integers(0, index - 1), min_size=1, max_size=min(2, index), unique=True))
        for pred in preds:
            edges.append({"from": f"t{pred}", "to": f"t{index}", "bytes": draw(st.sampled_from(SIZES))})
    if every_field:  # an early signal: on a task that sends messages, outside a critical section
        senders = {edge["from"] for edge in edges}
        for name, task in tasks.items():
            if name in senders and "critical" not in task and draw(st.booleans()):
                task["signal"] = draw(st.sampled_from([0.25, 0.5]))
    data: dict[str, Any] = {"tasks": tasks}
    if edges:
        data["edges"] = edges
    return data


def _context_names(levels: list[dict[str, Any]]) -> list[str]:
    """The paths of the existing contexts (a level's `count` may be a list: one per domain above)."""
    names = [""]
    for level in levels:
        count = level["count"]
        per = count if isinstance(count, list) else [count] * len(names)
        names = [
            f"{p}.{level['name']}{i}" if p else f"{level['name']}{i}" for p, n in zip(names, per) for i in range(n)
        ]
    return names


def _cycles_per_kind(draw, apps: dict[str, Any], kinds: list[str]) -> None:
    """Now and then a task's `cycles` given per kind of core (``{P: 600, E: 1200}``)."""
    for app in apps.values():
        for task in app["tasks"].values():
            if draw(st.booleans()):
                task["cycles"] = {kind: draw(st.sampled_from(CYCLES)) for kind in kinds}


def _per_kind_and_replicas(draw, apps: dict[str, Any], topo: dict[str, Any], every_field: bool) -> None:
    """Cycles per kind of core where the topology has kinds; replicas and a device with `every_field`."""
    if "kinds" in topo:
        _cycles_per_kind(draw, apps, list(topo["kinds"]))
    if every_field:
        _replicas(draw, apps)
        _device(draw, apps, topo)


def _device(draw, apps: dict[str, Any], topo: dict[str, Any]) -> None:
    """Now and then a device at some domain (or the machine), read by one task."""
    if not draw(st.booleans()):
        return
    context = draw(st.sampled_from(_context_names(topo["levels"])))
    parts = context.split(".")
    at = ".".join(parts[: draw(st.integers(0, len(parts)))]) or "machine"
    topo["devices"] = {"dev0": {"at": at, "kind": "nic"}}
    app = apps[draw(st.sampled_from(sorted(apps)))]
    task = app["tasks"][draw(st.sampled_from(sorted(app["tasks"])))]
    task["device"] = draw(st.sampled_from(["dev0", {"name": "dev0", "bytes": "256B"}]))


def _replicas(draw, apps: dict[str, Any]) -> None:
    """Now and then one task run by 2 replicas that share its packets, in turn or at random."""
    for app in apps.values():
        if draw(st.booleans()):
            task = app["tasks"][draw(st.sampled_from(sorted(app["tasks"])))]
            task["replicas"] = 2
            task["dispatch"] = draw(st.sampled_from(["round_robin", "hash"]))


def _thread_names(instance: str, tasks: dict[str, Any]) -> list[str]:
    """The threads of one instance (`specs.ThreadRef.name`): a replicated task's replicas ``.rK``."""
    out = []
    for task, fields in tasks.items():
        n = fields.get("replicas", 1)
        out += [f"{instance}.{task}"] if n == 1 else [f"{instance}.{task}.r{k}" for k in range(n)]
    return out


@st.composite
def spec_data(
    draw,
    max_threads: int = 7,
    constraints: bool = True,
    max_contexts: int = 16,
    max_tasks: int = 5,
    every_field: bool = False,
    kinds: bool | None = None,
    irregular: bool | None = None,
    measured: bool = False,
) -> dict[str, Any]:
    """A valid spec mapping with an inline topology, 1-2 applications, optional constraints
    (`every_field`, `kinds`, `irregular`, `measured`: see the module docstring)."""
    topo = draw(
        topology_data(
            max_contexts=max_contexts, every_field=every_field, kinds=kinds, irregular=irregular, measured=measured
        )
    )
    resources = [r["name"] for r in topo["resources"]]
    capacities = {r["name"]: r["capacity"] for r in topo["resources"]} if measured else None
    contexts = _context_names(topo["levels"])
    apps = {
        f"app{i}": draw(
            application_data(resources, max_tasks=max_tasks, every_field=every_field, capacities=capacities)
        )
        for i in range(draw(st.integers(1, 2)))
    }
    _per_kind_and_replicas(draw, apps, topo, every_field)
    workload = []
    threads: list[str] = []
    for name, app in apps.items():
        instances = draw(st.integers(1, 2))
        workload.append({"app": name, "instances": instances})
        threads += [thread for i in range(instances) for thread in _thread_names(f"{name}#{i}", app["tasks"])]
    data: dict[str, Any] = {
        "tasksolve": 1,
        "name": "generated",
        "topology": topo,
        "applications": apps,
        "workload": workload,
    }
    usable = contexts
    if constraints and draw(st.booleans()):
        cons: dict[str, Any] = {}
        if draw(st.booleans()) and len(contexts) > 1:
            usable = draw(st.lists(st.sampled_from(contexts), min_size=1, unique=True))
            if every_field and draw(st.booleans()):
                topo["usable"] = usable  # an imported host's allowed CPUs, on the topology
            else:
                cons["contexts"] = usable
        assume(len(threads) <= min(len(usable), max_threads))
        pinned = draw(st.lists(st.sampled_from(threads), unique=True, max_size=2))
        targets = draw(st.lists(st.sampled_from(usable), unique=True, min_size=len(pinned), max_size=len(pinned)))
        if pinned:
            cons["pin"] = dict(zip(pinned, targets))
        free = [t for t in threads if t not in pinned]
        if free and draw(st.booleans()):
            thread = draw(st.sampled_from(free))
            avoid = draw(st.sampled_from(contexts))
            if any(c != avoid and not c.startswith(avoid + ".") for c in usable):
                cons["forbid"] = {thread: [avoid]}
        if draw(st.booleans()):
            level = draw(st.sampled_from(topo["levels"]))
            cons["max_threads"] = {level["name"]: draw(st.integers(1, 4))}
        if draw(st.booleans()):
            cons["latency_max"] = draw(st.sampled_from(["3us", 5000, "800ns", "1ms"]))
        if cons:
            data["constraints"] = cons
    assume(len(threads) <= min(len(usable), max_threads))
    data["objective"] = draw(st.sampled_from(["total_throughput", "min_throughput", "latency"]))
    if draw(st.booleans()):
        data["oracle"] = {
            "kind": draw(st.sampled_from(["des", "analytic"])),
            "precision": draw(st.sampled_from(["1%", 0.02])),
            "seed": draw(st.integers(0, 1000)),
        }
    if draw(st.booleans()):
        data["search"] = {"time_limit": draw(st.sampled_from(["10s", 5, "2min"])), "top_k": draw(st.integers(1, 10))}
    return data


def load(data: dict[str, Any], feasibility: bool = False) -> Spec:
    """Load a drawn spec mapping (through YAML text, as a user's file would be).

    The constraints of `spec_data` are drawn independently, so a drawn spec may admit no
    placement (solvers must then say so): the feasibility checks (`specs.feasibility`) run only
    with ``feasibility=True``."""
    from tasksolve.specs.loader import load_spec_text

    return load_spec_text(yaml.safe_dump(data, sort_keys=False), "<generated>", feasibility=feasibility)


def load_for_the_model(data: dict[str, Any]) -> Spec:
    """`load` without the drawn ``oracle`` and ``search`` settings: the spec as the closed form and
    the solvers see it (what bound-against-brute-force tests compare)."""
    data.pop("oracle", None)
    data.pop("search", None)
    return load(data)


@st.composite
def binding_plans(draw, spec: Spec) -> list[int]:
    """A context index per thread (in `spec.threads` order) satisfying pins, forbid and caps.

    Draws an injective map into the usable contexts, pinned threads first; rejects draws that
    break a forbid or a cap (hypothesis reports when that is too rare).
    """
    topo = spec.topology
    cons = spec.constraints
    free = list(spec.usable_contexts)
    pins = {spec.thread_index[t]: topo.parse_context(c) for t, c in cons.pin.items()}
    for context in pins.values():
        free.remove(context)
    rest = [i for i in range(len(spec.threads)) if i not in pins]
    chosen = draw(st.permutations(free).map(lambda p: p[: len(rest)]))
    contexts = [0] * len(spec.threads)
    for i, c in pins.items():
        contexts[i] = c
    for i, c in zip(rest, chosen):
        contexts[i] = c
    for thread, domains in cons.forbid.items():
        c = contexts[spec.thread_index[thread]]
        for domain in domains:
            assume(c not in topo.contexts_of(*topo.parse_domain(domain)))
    for level_name, cap in cons.max_threads.items():
        level = topo.level_index(level_name)
        counts: dict[int, int] = {}
        for c in contexts:
            d = topo.domain_of(c, level)
            counts[d] = counts.get(d, 0) + 1
        assume(max(counts.values(), default=0) <= cap)
    return contexts
