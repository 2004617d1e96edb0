"""Devices where they sit (`specs.devices`): a NIC at a socket, a task that reads it, the cost of
reaching it by the levels between, and the plan that follows."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel, evaluate
from tasksolve.simulate.des import simulate
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import Plan, load_spec_text
from tasksolve.specs.devices import device_level
from tasksolve.specs.errors import SpecError
from tasksolve.specs.importers.hwloc import import_hwloc
from tests.specs.test_hwloc_corpus import DATA, _unpack

TOPOLOGY = """
topology:
  name: two sockets
  clock: 2GHz
  levels: [{name: socket, count: 2}, {name: core, count: 4}]
  communication: {socket: 40, machine: 300}
  devices:
    nic0: {at: %s, kind: nic}
"""


def spec_text(at: str = "socket1", device: str = "nic0", extra: str = "") -> str:
    return (
        "tasksolve: 1\nname: nic-reader\n"
        + TOPOLOGY % at
        + f"""applications:
  fwd:
    tasks:
      rx: {{cycles: 400, device: {device}}}
      work: {{cycles: 600}}
    edges:
      - {{from: rx, to: work, bytes: 64B}}
workload:
  - {{app: fwd, instances: 1}}
{extra}"""
    )


def test_the_cost_of_reaching_a_device_follows_the_levels_between():
    spec = load_spec_text(spec_text())
    topo = spec.topology
    assert [device_level(topo, "nic0", c) for c in (0, 3, 4, 7)] == [-1, -1, 0, 0]
    plan_far = Plan.from_contexts(spec, [0, 1])  # rx on socket 0: a machine-level message per packet
    plan_near = Plan.from_contexts(spec, [4, 5])  # rx on socket 1: a socket-level one
    far, near = evaluate(spec, plan_far), evaluate(spec, plan_near)
    assert far.threads[0]["work"] == pytest.approx(400 + 300)
    assert near.threads[0]["work"] == pytest.approx(400 + 40)
    model = BatchModel(spec).evaluate(np.array([[0, 1], [4, 5]]))
    assert model.total == pytest.approx([far.throughput, near.throughput])
    simulated = simulate(spec, plan_far, seed=0)
    assert simulated.throughput == pytest.approx(far.throughput, rel=1e-6)  # deterministic: exact


def test_a_task_tied_to_a_nic_on_socket_1_is_placed_on_socket_1():
    """Nothing else differs between the sockets: CP-SAT's proven plan puts rx on socket 1, and
    moving the device moves it."""
    for at, socket in (("socket1", 1), ("socket0", 0)):
        spec = load_spec_text(spec_text(at))
        best = solve_binding(BindingProblem(spec), time_limit=20, seed=0).best
        assert best.status == "OPTIMAL"
        rx = best.contexts[spec.thread_index["fwd#0.rx"]]
        assert spec.topology.domain_of(rx, 0) == socket
        assert best.objective == pytest.approx(evaluate(spec, Plan.from_contexts(spec, best.contexts)).throughput)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (spec_text(device="nic9"), "unknown device `nic9`"),
        (spec_text(at="socket7"), "socket index 7 is out of range"),
    ],
)
def test_bad_devices_are_refused_where_they_are_written(text, words):
    with pytest.raises(SpecError, match=words):
        load_spec_text(text)


def test_hwloc_devices_sit_where_lstopo_shows_them(tmp_path):
    """hwloc's own test machine with many virtual functions: every network device lstopo prints
    under ``Package L#k`` (its expected console output, which no one here wrote) is imported at
    socket k."""
    topology = import_hwloc(_unpack("16intel64-manyVFs", tmp_path)).topology
    expected, package = {}, None
    for line in (DATA / "16intel64-manyVFs.console").read_text().splitlines():
        found = re.match(r"\s*Package L#(\d+)", line)
        package = int(found.group(1)) if found else package
        device = re.search(r'OSDev\[[^\]]*Network[^\]]*\].*"([^"]+)"$', line)
        if device:
            expected[device.group(1)] = f"socket{package}"
    assert len(expected) == 9
    assert {name: d.at for name, d in topology.devices.items()} == expected
    assert {d.kind for d in topology.devices.values()} == {"nic"}
