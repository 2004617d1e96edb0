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
    assert placement.environment("/p", 5) == {
        "TASKSOLVE_CPUS": cpus,
        "TASKSOLVE_PLAN": "/p",
        "TASKSOLVE_SEED": "5",
        "TASKSOLVE_PINNING": "plan",
    }


def test_the_unpinned_placement_tells_the_program_not_to_pin_in_every_form():
    spec = SimpleNamespace(
        thread_names=["app#0.a", "app#0.b"], topology=SimpleNamespace(n_contexts=3, os_cpu_list=[4, 5, 6])
    )
    placement = Placement.unpinned(spec)
    argv = placement.argv(["{cpus}", "{lcores}", "{omp_places}", "{cpu:app#0.b}"], "/p")
    assert argv == ["4,5,6", "0@(4,5,6),1@(4,5,6)", "{4,5,6}", "-1"]
    env = placement.environment("/p", None)
    assert env["TASKSOLVE_PINNING"] == "none" and env["TASKSOLVE_CPUS"] == "4,5,6"
    document = placement.document("s", 1)
    assert document["pinning"] == "none" and document["cpus"] == [4, 5, 6]
    assert all(t["cpu"] is None and t["context"] is None for t in document["threads"])
    assert placement.label == "unpinned (OS scheduler)"
