"""Topologies: names of domains and contexts, shared levels, the cache communication model."""

from __future__ import annotations

import pytest

from tasksolve.specs import load_spec_text, load_topology
from tasksolve.specs.topology import Topology


@pytest.fixture(scope="module")
def t2() -> Topology:
    return load_topology("ultrasparc-t2")


def test_t2_shape(t2):
    assert t2.n_contexts == 64
    assert t2.strides == [8, 4, 1]
    assert t2.context_name(0) == "core0.pipe0.strand0"
    assert t2.context_name(63) == "core7.pipe1.strand3"
    assert t2.context_name(13) == "core1.pipe1.strand1"


def test_names_round_trip(t2):
    for context in range(t2.n_contexts):
        assert t2.parse_context(t2.context_name(context)) == context
    for level in range(3):
        for domain in range(t2.domain_count(level)):
            assert t2.parse_domain(t2.domain_name(level, domain)) == (level, domain)


def test_shared_level(t2):
    assert t2.shared_level(0, 1) == 1  # same pipe
    assert t2.shared_level(0, 4) == 0  # same core, other pipe
    assert t2.shared_level(0, 8) == -1  # other cores: only the machine
    assert t2.message_cycles(t2.shared_level(0, 8), 64) == t2.communication.cycles["machine"]


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("core3.strand1", "expected `pipe` where `strand` is"),
        ("core8", "core index 8 is out of range"),
        ("cor3", "did you mean `core`?"),
        ("core1.pipe0.strand0.x1", "more parts than the topology has levels"),
        ("3", "not of the form `core<index>`"),
    ],
)
def test_domain_errors(t2, text, fragment):
    with pytest.raises(ValueError) as info:
        t2.parse_domain(text)
    assert fragment in str(info.value)


def test_level_names_ending_in_digits():
    xeon = load_topology("xeon-e5335-2s")
    assert xeon.parse_domain("socket1.l21") == (1, 3)
    assert xeon.context_name(7) == "socket1.l21.core1"


def test_cache_model_is_lata_eq2():
    """Eq. 2: T_L1*h1 + T_L2*(1-h1)*h2 + T_mem*(1-h1)*(1-h2), times the size in lines (Eq. 1)."""
    topo = Topology.model_validate(
        {
            "name": "x",
            "clock": "1GHz",
            "levels": [{"name": "l2", "count": 2}, {"name": "core", "count": 2}, {"name": "smt", "count": 2}],
            "communication": {
                "model": "cache",
                "line": "64B",
                "latency": {"core": 3, "l2": 14, "machine": 217},
                "hit_rate": {"core": 0.8, "l2": 0.6},
            },
        }
    )
    h1, h2 = 0.8, 0.6
    same_core = 3 * h1 + 14 * (1 - h1) * h2 + 217 * (1 - h1) * (1 - h2)
    assert topo.message_cycles(topo.shared_level(0, 1), 64) == pytest.approx(same_core)
    same_l2 = 14 * h2 + 217 * (1 - h2)
    assert topo.message_cycles(topo.shared_level(0, 2), 64) == pytest.approx(same_l2)
    assert topo.message_cycles(topo.shared_level(0, 4), 64) == pytest.approx(217)
    assert topo.message_cycles(topo.shared_level(0, 4), 130) == pytest.approx(3 * 217)  # 3 lines
    assert topo.message_cycles(topo.shared_level(0, 4), 0) == 0


def test_xeon_l2_pair_cost():
    xeon = load_topology("xeon-e5335-2s")
    assert xeon.message_cycles(xeon.shared_level(0, 1), 64) == pytest.approx(14 * 0.9 + 217 * 0.1)
    assert xeon.message_cycles(xeon.shared_level(0, 2), 64) == pytest.approx(217)


def test_spec_thread_names_and_usable_contexts():
    spec = load_spec_text("""
tasksolve: 1
name: s
topology: ultrasparc-t2
applications:
  a:
    tasks: {x: {cycles: 10}, y: {cycles: 20}}
    edges: [{from: x, to: y}]
workload: [{app: a, instances: 2}]
constraints: {contexts: [core1, core2.pipe1]}
""")
    assert spec.thread_names == ["a#0.x", "a#0.y", "a#1.x", "a#1.y"]
    assert spec.usable_contexts == list(range(8, 16)) + list(range(20, 24))
    assert spec.parse_thread("a#1.y").instance == 1
