"""Kinds of core and irregular trees (`specs.cpu_kinds`, `specs.topology`) against brute force.

On small random hybrid and irregular topologies (`specs.strategies` with ``kinds=True`` and
``irregular=True``):

* symmetry and counting: the automorphisms of the usable tree are found by brute force (every
  permutation of the usable contexts that keeps each context's kind and the level every pair of
  contexts shares); Burnside's lemma over them gives the number of placement classes, which
  `count_distinct`, the distinct canonical forms and the representatives must all equal, each
  representative's orbit being ``|G| / |stabiliser|``;
* the closed form: `BatchModel` against the per-plan `simulate.analytic.evaluate` on every plan
  (NPIRE's critical sections and signals included), equal on plans of one placement class;
* the simulation against the closed form where ``idle_demand == demand`` (exact there);
* a slower kind never makes a plan faster, one kind over the whole machine scales every figure by
  its ``speed * ipc``, and a hand-computed hybrid machine.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate import AnalyticOracle, SimulationOracle
from tasksolve.simulate.analytic import BatchModel, evaluate
from tasksolve.simulate.model import binding_structure, compile_contexts
from tasksolve.specs import Plan, Topology, UsableTree, count_distinct, load_spec_text
from tasksolve.specs import strategies as st_specs
from tests.simulate import spinning

REL = 1e-9
SMALL = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def hybrid_specs(max_threads: int = 4, max_contexts: int = 8, every_field: bool = False, constraints: bool = True):
    """Small specs with usable contexts of 2-3 kinds of core on a maybe irregular tree."""
    return (
        st_specs.spec_data(
            max_threads=max_threads,
            constraints=constraints,
            max_contexts=max_contexts,
            max_tasks=3,
            every_field=every_field,
            kinds=True,
            irregular=True,
        )
        .map(st_specs.load_for_the_model)
        .filter(lambda spec: len({spec.topology.context_kinds[c] for c in spec.usable_contexts}) >= 2)
    )


# ------------------------------------------------------------------------------ symmetry and counting
def automorphisms(topo, usable: list[int]) -> list[tuple[int, ...]]:
    """Every permutation of `usable` (as positions into it) keeping each context's kind and the
    innermost level every pair shares: the usable tree's automorphisms, by backtracking."""
    n = len(usable)
    kind = [topo.context_kinds[c] for c in usable]
    share = [[topo.shared_level(a, b) for b in usable] for a in usable]
    found: list[tuple[int, ...]] = []
    image = [-1] * n
    used = [False] * n

    def extend(i: int) -> None:
        if i == n:
            found.append(tuple(image))
            return
        for j in range(n):
            if used[j] or kind[j] != kind[i] or any(share[i][k] != share[j][image[k]] for k in range(i)):
                continue
            image[i], used[j] = j, True
            extend(i + 1)
            used[j] = False

    extend(0)
    return found


@SMALL
@given(hybrid_specs(), st.integers(0, 2**31 - 1))
def test_counts_and_classes_equal_burnside_over_the_brute_force_automorphisms(spec, seed):
    topo, usable = spec.topology, list(spec.usable_contexts)
    assert all(topo.exists(len(topo.levels) - 1, c) for c in usable)
    tree = UsableTree.of(topo, usable)
    group = automorphisms(topo, usable)
    rng = random.Random(seed)
    position = {c: i for i, c in enumerate(usable)}
    for _ in range(4):  # the tree's own random symmetries are automorphisms: kinds kept
        mapping = tree.random_automorphism(rng)
        assert sorted(mapping) == usable
        assert tuple(position[mapping[c]] for c in usable) in set(group)
        assert all(topo.kind_of(c) == topo.kind_of(mapping[c]) for c in usable)
    sample = rng.sample(group, min(4, len(group)))
    for n in range(min(3, len(usable)) + 1):
        fixed = [sum(1 for i, j in enumerate(g) if i == j) for g in group]
        burnside = sum(math.perm(f, n) for f in fixed)
        assert burnside % len(group) == 0
        classes = burnside // len(group)
        assert count_distinct(tree, n) == classes
        forms: dict[object, int] = {}
        for row in itertools.permutations(range(len(usable)), n):
            placement = {usable[i]: t for t, i in enumerate(row)}
            form = tree.canonical_form(placement)
            forms[form] = forms.get(form, 0) + 1
            for g in sample:  # invariant under the automorphisms
                assert tree.canonical_form({usable[g[i]]: t for t, i in enumerate(row)}) == form
            assert tree.canonical_form(tree.canonical_placement(placement)) == form
        assert len(forms) == classes
        reps = list(tree.representatives_with_orbits(n))
        assert len(reps) == classes and sum(orbit for _, orbit in reps) == math.perm(len(usable), n)
        for rep, orbit in reps:
            occupied = [position[c] for c in rep]
            stabiliser = sum(1 for g in group if all(g[i] == i for i in occupied))
            assert orbit == len(group) // stabiliser == forms[tree.canonical_form(rep)]


def test_a_hybrid_irregular_machine_counted_by_hand():
    """HYBRID: 8 P clusters of one core with 2 SMT threads, 2 E clusters of 4 single-thread
    cores: 24 contexts of the padded 10 x 4 x 2 = 80.  One thread: on a P or on an E context,
    2 classes.  Two distinguishable threads: SMT siblings of one P core, two P cores, (P, E),
    (E, P), two E cores of one cluster, E cores of two clusters: 6 classes."""
    spec = load_spec_text(HYBRID)
    topo = spec.topology
    assert topo.n_contexts == 80 and len(topo.present_contexts) == 24
    assert [topo.kind_of(c) for c in topo.present_contexts].count("E") == 8
    tree = UsableTree.of(topo, spec.usable_contexts)
    assert [count_distinct(tree, n) for n in (1, 2)] == [2, 6]
    assert UsableTree.of(topo).usable == tuple(topo.present_contexts)  # never a padded context


@SMALL
@given(st_specs.topology_data(max_contexts=16, irregular=True), st.lists(st.integers(0, 300), min_size=4, max_size=4))
def test_the_average_message_cost_is_over_pairs_of_existing_contexts(data, costs):
    """LATA's location-independent cost (direct form): the mean over ordered pairs of distinct
    existing contexts -- the padding of an irregular tree holds none."""
    names = [level["name"] for level in data["levels"]]
    data["communication"] = dict(zip(list(reversed(names[:-1])) + ["machine"], costs))
    topo = Topology.model_validate(data)
    present = topo.present_contexts
    pairs = [(a, b) for a in present for b in present if a != b]
    expected = np.mean([topo.message_cycles(topo.shared_level(a, b), 64) for a, b in pairs]) if pairs else None
    if expected is None:
        expected = topo.message_cycles(len(names) - 1, 64)
    assert topo.average_message_cycles(64) == pytest.approx(expected, rel=REL)


# ------------------------------------------------------------------------------ the closed form
def every_plan(spec, limit: int = 400) -> np.ndarray:
    """Every injective placement of the threads into the usable contexts (evenly thinned to
    `limit`)."""
    rows = np.array(list(itertools.permutations(spec.usable_contexts, len(spec.threads))), dtype=int)
    if len(rows) > limit:
        rows = rows[np.linspace(0, len(rows) - 1, limit).astype(int)]
    return rows


@SMALL
@given(hybrid_specs(max_threads=4, max_contexts=6, every_field=True))
def test_batch_model_equals_the_per_plan_closed_form_on_every_plan(spec):
    rows = every_plan(spec)
    batch = BatchModel(spec).evaluate(rows)
    structure = binding_structure(spec)
    names = [f"{app}#{i}" for app, i in spec.instances]
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    by_class: dict[object, float] = {}
    for p, row in enumerate(rows):
        m = evaluate(spec, None, compile_contexts(spec, row, structure))
        assert batch.total[p] == pytest.approx(m.throughput, rel=REL)
        assert batch.min_instance[p] == pytest.approx(m.min_throughput, rel=REL)
        assert batch.per_instance[p] == pytest.approx([m.per_instance[i] for i in names], rel=REL)
        assert batch.latency_max[p] == pytest.approx(max(m.per_instance_latency.values()), rel=REL)
        assert batch.latency_mean[p] == pytest.approx(m.latency_mean, rel=REL)
        # one placement class, one value (kinds are never exchanged)
        form = tree.canonical_form({int(c): t for t, c in enumerate(row)})
        assert by_class.setdefault(form, m.throughput) == pytest.approx(m.throughput, rel=REL)


def _slower(data, factor: float):
    """The spec data with its first kind `factor` times slower (its clock or speed lowered)."""
    kind = next(iter(data["topology"]["kinds"].values()))
    if "clock" in kind:
        kind["clock"] = f"{float(str(kind['clock'])[:-3]) * factor}MHz"
    else:
        kind["speed"] = kind.get("speed", 1) * factor
    return data


@SMALL
@given(st_specs.spec_data(max_threads=4, max_contexts=6, max_tasks=3, every_field=True, kinds=True, irregular=True))
def test_a_slower_kind_never_makes_a_plan_faster(data):
    data.pop("oracle", None)
    data.pop("search", None)
    spec = st_specs.load(data)
    slow = st_specs.load(_slower(yaml.safe_load(yaml.safe_dump(data)), 0.5))
    rows = every_plan(spec)
    fast_m, slow_m = BatchModel(spec).evaluate(rows), BatchModel(slow).evaluate(rows)
    assert np.all(slow_m.total <= fast_m.total * (1 + REL))
    assert np.all(slow_m.min_instance <= fast_m.min_instance * (1 + REL))
    assert np.all(slow_m.latency_max >= fast_m.latency_max * (1 - REL))
    # per thread: its work on the slowed kind is at least what it was
    structure_fast, structure_slow = binding_structure(spec), binding_structure(slow)
    for row in rows[:20]:
        fast_g = compile_contexts(spec, row, structure_fast)
        slow_g = compile_contexts(slow, row, structure_slow)
        assert np.all(slow_g.work >= fast_g.work * (1 - REL))


@SMALL
@given(
    st_specs.spec_data(max_threads=4, max_contexts=6, max_tasks=3, every_field=True, kinds=False),
    st.sampled_from([0.5, 0.75, 2.0]),
    st.sampled_from([0.5, 1.0, 1.25]),
)
def test_one_kind_over_the_machine_scales_every_figure_by_speed_times_ipc(data, speed, ipc):
    """Without messages (which do not scale with a core's clock) and without rollbacks (a
    failed speculation's cost in cycles of the topology's clock), a single kind of speed s and
    IPC i makes every task ``s * i`` times faster: throughputs times ``s * i``, latencies over it."""
    data.pop("oracle", None)
    data.pop("search", None)
    data["topology"].pop("communication", None)
    for app in data["applications"].values():
        for task in app["tasks"].values():
            if "critical" in task:
                task["critical"]["rollback"] = 0
    base = st_specs.load(data)
    data["topology"]["kinds"] = {"only": {"speed": speed, "ipc": ipc}}
    scaled = st_specs.load(data)
    rows = every_plan(base, limit=100)
    a, b = BatchModel(base).evaluate(rows), BatchModel(scaled).evaluate(rows)
    assert b.total == pytest.approx(a.total * speed * ipc, rel=REL)
    assert b.latency_max == pytest.approx(a.latency_max / (speed * ipc), rel=REL)


# ------------------------------------------------------------------------------ the simulation
SIM = {"packets": 3000, "warmup": 300, "precision": 1e-6, "time_cap": 60.0}


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(hybrid_specs(max_threads=4, max_contexts=8, constraints=False))
def test_simulation_equals_the_closed_form_on_hybrid_spinning_specs(spec):
    """idle_demand == demand and deterministic service: the closed form is the simulation's
    throughput and every thread's rate (docs/design.md)."""
    spec = spinning(spec)
    des, closed = SimulationOracle(spec, **SIM), AnalyticOracle(spec)
    rows = every_plan(spec, limit=4)
    for row in rows:
        plan = Plan.from_contexts(spec, [int(c) for c in row])
        m, a = des.evaluate(plan), closed.evaluate(plan)
        assert abs(m.throughput - a.throughput) <= m.half_width + 1e-6 * a.throughput, (m.throughput, a.throughput)
        for sim_t, an_t in zip(m.threads, a.threads):
            assert sim_t["rate"] == pytest.approx(an_t["rate"], rel=1e-9)
            assert sim_t["work"] == pytest.approx(an_t["work"], rel=1e-6)


# ------------------------------------------------------------------------------ by hand
HYBRID = """
tasksolve: 1
name: hybrid-test
topology:
  name: hybrid
  clock: 3.2 GHz
  levels:
    - {name: cluster, count: 10}
    - {name: core, count: [1, 1, 1, 1, 1, 1, 1, 1, 4, 4]}
    - {name: thread, count: [2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]}
  kinds:
    P: {}
    E: {clock: 2.4 GHz, ipc: 0.75, domains: [cluster8, cluster9]}
  resources:
    - {name: l2, level: cluster}
applications:
  a:
    tasks:
      rx: {cycles: {P: 900, E: 1500}, demand: {l2: 0.3}}
      work: {cycles: 3000}
    edges: [{from: rx, to: work, bytes: 64B}]
workload: [{app: a, instances: 2}]
"""

CLOCK = 3.2e9
# E runs at 2.4 / 3.2 = 0.75 of the topology's clock with IPC 0.75.  In cycles of the 3.2 GHz clock:
# rx: 900 on P; 1500 given for E, over the speed: 1500 / 0.75 = 2000.
# work: 3000 on P; on E 3000 / 0.75 (IPC) / 0.75 (speed) = 5333.33...
# No communication section: messages are free.  l2 (capacity 1 per cluster) is loaded by rx
# alone, 0.3 per thread: every rate is 1.  Period = the slower thread of the instance.
HAND = [
    # (rx#0, work#0, rx#1, work#1), total packets/s, latency of instance 0 (s)
    (("cluster0.core0.thread0", "cluster1.core0.thread0", "cluster2.core0.thread0", "cluster3.core0.thread0"),
     2 * CLOCK / 3000, (900 + 3000) / CLOCK),
    # both work threads on E cores: period 5333.33 cycles, 600 000 packets/s per instance
    (("cluster0.core0.thread0", "cluster8.core0.thread0", "cluster0.core0.thread1", "cluster9.core1.thread0"),
     2 * 600_000.0, (900 + 3000 / 0.75 / 0.75) / CLOCK),
    # rx on E (2000 cycles), work on P (3000): the period stays 3000, the latency grows
    (("cluster8.core0.thread0", "cluster1.core0.thread1", "cluster9.core3.thread0", "cluster2.core0.thread0"),
     2 * CLOCK / 3000, (2000 + 3000) / CLOCK),
]  # fmt: skip


@pytest.mark.parametrize("contexts, total, latency", HAND)
def test_a_hybrid_machine_computed_by_hand(contexts, total, latency):
    spec = load_spec_text(HYBRID)
    threads = list(spec.thread_names)
    assert threads == ["a#0.rx", "a#0.work", "a#1.rx", "a#1.work"]
    topo = spec.topology
    rows = np.array([[topo.parse_context(c) for c in contexts]])
    batch = BatchModel(spec).evaluate(rows)
    assert batch.total[0] == pytest.approx(total, rel=REL)
    plan = Plan(bindings=dict(zip(threads, contexts)))
    closed = AnalyticOracle(spec).evaluate(plan)
    assert closed.throughput == pytest.approx(total, rel=REL)
    assert closed.per_instance_latency["a#0"] == pytest.approx(latency, rel=REL)
    simulated = SimulationOracle(spec, **SIM).evaluate(plan)
    assert simulated.throughput == pytest.approx(total, rel=1e-6)


def test_a_thread_on_a_slower_kind_is_never_faster():
    """One task alone: packets/s = clock * speed * ipc / cycles on each kind, by hand (a 1 GHz
    topology: P at 1 GHz, IPC 1; E at speed 0.5, IPC 0.8; LP at 0.25 GHz of its own, IPC 2)."""
    text = """
tasksolve: 1
name: one-task
topology:
  name: three-kinds
  clock: 1 GHz
  levels: [{name: core, count: 3}]
  kinds:
    P: {domains: [core0]}
    E: {speed: 0.5, ipc: 0.8, domains: [core1]}
    LP: {clock: 250 MHz, ipc: 2}
applications: {a: {tasks: {t: {cycles: 1000}}}}
workload: [{app: a, instances: 1}]
"""
    spec = load_spec_text(text)
    value = BatchModel(spec).evaluate(np.array([[0], [1], [2]])).total
    # P: 1e9 / 1000 = 1e6; E: 1e9 * 0.5 * 0.8 / 1000 = 4e5; LP: 1e9 * 0.25 * 2 / 1000 = 5e5
    assert value == pytest.approx([1e6, 4e5, 5e5], rel=REL)


def test_topology_show_lists_only_the_existing_contexts(tmp_path, capsys):
    """HYBRID's topology: 24 contexts exist of the padded 80; `topology show --json` lists those
    24, each with its own OS CPU (numbered in order: 0..23)."""
    import json

    from tasksolve.solver.cli import main

    path = tmp_path / "hybrid-topology.yaml"
    path.write_text(yaml.safe_dump(yaml.safe_load(HYBRID)["topology"]))
    assert main(["topology", "show", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["contexts"]
    topo = load_spec_text(HYBRID).topology
    assert [c["context"] for c in listed] == [topo.context_name(c) for c in topo.present_contexts]
    assert [c["os_cpu"] for c in listed] == list(range(24))
