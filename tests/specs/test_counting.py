"""Counts are exact integers of any size: placements against brute force and the closed form,
the rounded scientific form against decimal arithmetic, the CLI on counts of thousands of
digits (distinct placements against brute force: tests/specs/test_properties.py)."""

from __future__ import annotations

import itertools
import json
import math
import sys
from decimal import ROUND_HALF_UP, Decimal, localcontext

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.solver.cli import main
from tasksolve.specs import Topology, UsableTree, count_distinct, count_placements
from tasksolve.specs.counting import digits, json_count, scientific, work_estimate


@given(st.integers(1, 6), st.integers(0, 6))
def test_placements_equal_brute_force(contexts, threads):
    brute = sum(1 for _ in itertools.permutations(range(contexts), threads)) if threads <= contexts else 0
    assert count_placements(threads, contexts) == brute
    assert isinstance(count_placements(threads, contexts), int)


@given(st.integers(0, 10**3000))
def test_digits_are_exact(value):
    assert digits(value) == str(value)


def test_digits_beyond_the_conversion_guard():
    value = 7 * 10**9000 + 12345
    text = digits(value)
    assert len(text) == 9001 and text.startswith("7000") and text.endswith("12345")
    assert json_count(value) == text and json_count(10**100) == 10**100 and json_count(None) is None
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert text == str(value)
    finally:
        sys.set_int_max_str_digits(previous)


@settings(max_examples=300)
@given(st.one_of(st.integers(0, 10**40), st.integers(10**300, 10**2000)), st.integers(1, 6))
def test_the_scientific_form_rounds_the_exact_integer(value, significant):
    text = scientific(value, significant)
    if value < 1000:
        assert text == str(value)
        return
    with localcontext() as ctx:
        ctx.rounding = ROUND_HALF_UP
        ctx.prec = significant
        expected = format(+Decimal(value), f".{significant - 1}e").replace("e+", "e")
    assert text == expected


def test_a_count_past_floats_is_exact():
    """64 contexts x 60 threads: the exact value, not a float's 17 digits."""
    assert count_placements(60, 64) == math.factorial(64) // math.factorial(4)
    assert scientific(10**400) == "1.00e400" and scientific(99950) == "1.00e5" and scientific(1526) == "1.53e3"


def test_a_budget_skips_only_the_distinct_count():
    topo = Topology.model_validate(
        {"name": "t", "clock": "1GHz", "levels": [{"name": "a", "count": 16}, {"name": "b", "count": 16}]}
    )
    tree = UsableTree.of(topo)
    assert count_distinct(tree, 200, max_work=work_estimate(tree, 200) - 1) is None
    small = count_distinct(tree, 3, max_work=work_estimate(tree, 3))
    # all apart (1), one of the 3 pairs together (3), all three in one domain (1)
    assert small == count_distinct(tree, 3) == 5


def test_the_count_command_on_thousands_of_digits(tmp_path, capsys):
    spec = tmp_path / "big.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "tasksolve": 1,
                "name": "big",
                "topology": {
                    "name": "big",
                    "clock": "1GHz",
                    "levels": [
                        {"name": "socket", "count": 16},
                        {"name": "core", "count": 64},
                        {"name": "smt", "count": 64},
                    ],
                },
                "applications": {"a": {"tasks": {"A": {"cycles": 10}}}},
                "workload": [{"app": "a", "instances": 1500}],
            }
        )
    )
    assert main(["count", str(spec), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    exact = math.perm(65536, 1500)
    assert result["placements"] == digits(exact) and result["placements_digits"] == len(digits(exact)) > 4000
    assert result["placements_sci"] == scientific(exact) and result["distinct_placements"] is None
    assert main(["count", str(spec)]) == 0
    out = capsys.readouterr().out
    assert f"about {scientific(exact)}" in out and f"{len(digits(exact))} digits" in out and "not counted" in out


def test_set_partitions_never_grow_a_block_past_its_capacity():
    """Blocks only grow as items join, so a block over capacity is cut where it forms: 12 items
    in blocks of at most 1 give one partition (Bell(12) = 4,213,597 listed and filtered before),
    and blocks of at most 2 give the matchings (140,152 partitions of 12 items into pairs and
    singletons)."""
    from tasksolve.specs.symmetry import _set_partitions

    assert list(_set_partitions(tuple(range(12)), 24, 1)) == [[(i,) for i in range(12)]]
    pairs = list(_set_partitions(tuple(range(12)), 12, 2))
    assert len(pairs) == 140_152 and all(len(block) <= 2 for p in pairs for block in p)


def test_twenty_threads_on_one_cluster_of_single_context_cores_are_one_class():
    """20 threads on 24 interchangeable cores of one thread each: every plan is the same class,
    24! / 4! raw placements; enumerated at once (it listed Bell(20) ~ 5e13 set partitions)."""
    topo = Topology.model_validate(
        {"name": "t", "clock": "1GHz", "levels": [{"name": "cluster", "count": 1}, {"name": "core", "count": 24}]}
    )
    tree = UsableTree.of(topo)
    reps = list(tree.representatives_with_orbits(20))
    assert len(reps) == 1 and reps[0][1] == math.factorial(24) // math.factorial(4)
    assert count_distinct(tree, 20) == 1
