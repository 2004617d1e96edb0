"""The level and configuration LPs on a hybrid: one class per kind of core, so their bounds are
tight where the fastest kind everywhere would be loose -- and never below the brute-force optimum.

The spec: two P-cores of two hyper-threads, each its own L2 cluster, and one cluster of two
E-cores (speed 0.6, IPC 0.8); three instances of rx -> work fill all six contexts, so two threads
must run on E-cores. Brute force: every one of the 720 plans on the closed form.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding import level_lp
from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.level_lp import level_bound
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec_text

SPEC = """
tasksolve: 1
name: small-hybrid
topology:
  name: small-hybrid
  clock: 3 GHz
  levels:
    - {name: cluster, count: 3}
    - {name: core, count: [1, 1, 2]}
    - {name: thread, count: [2, 2, 1, 1]}
  kinds:
    P: {}
    E: {speed: 0.6, ipc: 0.8, domains: [cluster2]}
  resources:
    - {name: l2, level: cluster, capacity: 1}
    - {name: alu, level: core, capacity: 1}
  communication: {core: 10, cluster: 40, machine: 200}
applications:
  a:
    tasks:
      rx: {cycles: {P: 900, E: 1000}, demand: {l2: 0.3, alu: 0.6}}
      work: {cycles: 3000, demand: {l2: 0.5, alu: 0.7}}
    edges: [{from: rx, to: work, bytes: 64B}]
workload: [{app: a, instances: 3}]
"""


@pytest.fixture(scope="module")
def spec():
    return load_spec_text(SPEC)


@pytest.fixture(scope="module")
def optimum(spec):
    plans = np.array(list(itertools.permutations(spec.usable_contexts, len(spec.threads))))
    return float(BatchModel(spec).evaluate(plans).total.max())


def test_the_configuration_lp_reaches_the_brute_force_optimum_on_a_hybrid(spec, optimum):
    bound = configuration_bound(BindingProblem(spec)).value
    assert optimum <= bound <= optimum * (1 + 1e-6)


def test_the_level_lp_bounds_the_optimum_and_is_tighter_with_its_kinds(spec, optimum, monkeypatch):
    by_kind = level_bound(BindingProblem(spec)).value
    monkeypatch.setattr(level_lp, "cell_key", lambda topology, cell: len(cell))  # every cell at the fastest kind
    fastest = level_bound(BindingProblem(spec)).value
    assert optimum <= by_kind < fastest
    assert by_kind <= optimum * 1.05 and fastest > optimum * 1.2  # measured: +3.3% and +30%
