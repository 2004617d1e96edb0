"""The placement forms the command oracle hands to a program (`simulate.pinning`)."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate.pinning import Placement, os_cpus
from tasksolve.specs import load_spec
from tasksolve.specs.placeholders import PLACEHOLDER

SPEC = load_spec("t2-ipfwd-intmul-x2")


def test_os_cpus_are_the_topologys_numbers_when_it_has_them_else_the_flat_index():
    assert os_cpus(SimpleNamespace(n_contexts=4)) == [0, 1, 2, 3]
    assert os_cpus(SimpleNamespace(n_contexts=4, os_cpu_list=[0, 2, 1, 3])) == [0, 2, 1, 3]
    assert os_cpus(SPEC.topology)[:3] == [0, 1, 2]


placements = st.lists(st.integers(0, 4095), min_size=1, max_size=12).map(
    lambda cpus: Placement([f"app#0.t{i}" for i in range(len(cpus))], [f"c{c}" for c in cpus], cpus)
)


@settings(max_examples=200, deadline=None)
@given(placements, st.lists(st.text(max_size=30), max_size=6))
def test_text_without_placeholders_is_passed_unchanged_and_forms_agree(placement, elements):
    literal = [e for e in elements if not PLACEHOLDER.search(e)]
    argv = placement.argv(literal + ["{cpus}", "{lcores}", "{omp_places}", "x{cpu:app#0.t0}y", "{plan_file}"], "/p")
    assert argv[: len(literal)] == literal
    cpus, lcores, places, one, plan_file = argv[len(literal) :]
    assert [int(c) for c in cpus.split(",")] == placement.cpus
    assert [tuple(map(int, x.split("@"))) for x in lcores.split(",")] == list(enumerate(placement.cpus))
    assert places == ",".join("{" + str(c) + "}" for c in placement.cpus)
    assert one == f"x{placement.cpus[0]}y" and plan_file == "/p"
    assert placement.environment("/p", 5) == {"TASKSOLVE_CPUS": cpus, "TASKSOLVE_PLAN": "/p", "TASKSOLVE_SEED": "5"}
