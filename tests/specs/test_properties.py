"""Property tests: round trips, mutations never crash, counting equals brute force, symmetry."""

from __future__ import annotations

import copy
import itertools
import random
import typing

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from tasksolve.solver.cli import main
from tasksolve.specs import (
    Plan,
    SpecError,
    UsableTree,
    count_distinct,
    count_placements,
    dump_spec,
    load_spec,
    load_spec_text,
)
from tasksolve.specs import strategies as spec_st
from tasksolve.specs.spec import Spec
from tasksolve.specs.topology import Topology

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(spec_st.spec_data())
def test_valid_specs_round_trip(data):
    spec = spec_st.load(data)
    again = load_spec_text(dump_spec(spec), feasibility=False)
    assert again == spec
    assert dump_spec(again) == dump_spec(spec)


@SETTINGS
@given(st.data())
def test_plans_round_trip_and_check(data):
    spec = spec_st.load(data.draw(spec_st.spec_data()))
    contexts = data.draw(spec_st.binding_plans(spec))
    plan = Plan.from_contexts(spec, contexts, method="test")
    again = Plan.model_validate(yaml.safe_load(plan.to_yaml()))
    assert again == plan
    assert again.contexts(spec) == contexts
    from tasksolve.specs import check_plan

    assert check_plan(spec, plan) == []


# ----------------------------------------------------------------------------- mutations
def _options(annotation):
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _options(typing.get_args(annotation)[0])
    if origin in (typing.Union, __import__("types").UnionType):
        return [o for a in typing.get_args(annotation) if a is not type(None) for o in _options(a)]
    return [annotation]


def _model_mappings(data, annotation, path=()):
    """Yield (path, model class) for every mapping in `data` that is a fixed-schema model."""
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel) and isinstance(data, dict):
            yield path, option
            for name, field in option.model_fields.items():
                key = field.alias or name
                if key in data:
                    yield from _model_mappings(data[key], field.annotation, path + (key,))
            return
        origin = typing.get_origin(option)
        if origin is dict and isinstance(data, dict):
            value_type = typing.get_args(option)[1]
            for key, value in data.items():
                yield from _model_mappings(value, value_type, path + (key,))
            return
        if origin is list and isinstance(data, list):
            item_type = typing.get_args(option)[0]
            for index, value in enumerate(data):
                yield from _model_mappings(value, item_type, path + (index,))
            return


def _get(data, path):
    for part in path:
        data = data[part]
    return data


@st.composite
def invalid_mutations(draw):
    """A valid spec and a mutation of it that makes it certainly invalid."""
    data = draw(spec_st.spec_data())
    mappings = list(_model_mappings(data, Spec))
    kind = draw(st.sampled_from(["delete", "retype", "rename", "unit"]))
    mutated = copy.deepcopy(data)
    if kind == "delete":
        candidates = [
            (p, name)
            for p, model in mappings
            for name, f in model.model_fields.items()
            if f.is_required() and (f.alias or name) in _get(data, p) and name != "model"
        ]
        assume(candidates)
        path, name = draw(st.sampled_from(candidates))
        del _get(mutated, path)[mappings[[p for p, _ in mappings].index(path)][1].model_fields[name].alias or name]
    elif kind == "retype":
        candidates = [
            (p, f.alias or name)
            for p, model in mappings
            for name, f in model.model_fields.items()
            if (f.alias or name) in _get(data, p) and name not in ("description", "name")
        ]
        assume(candidates)
        path, key = draw(st.sampled_from(candidates))
        value = _get(mutated, path)[key]
        _get(mutated, path)[key] = {"unexpected": 1} if not isinstance(value, dict) else 42
    elif kind == "rename":
        candidates = [(p, k) for p, _ in mappings for k in _get(data, p)]
        assume(candidates)
        path, key = draw(st.sampled_from(candidates))
        target = _get(mutated, path)
        target[f"{key}_x"] = target.pop(key)
    else:
        texts = [(("topology",), "clock")]
        if "constraints" in mutated and "latency_max" in mutated["constraints"]:
            texts.append((("constraints",), "latency_max"))
        path, key = draw(st.sampled_from(texts))
        _get(mutated, path)[key] = f"{_get(mutated, path)[key]}zz"
    return kind, mutated


@SETTINGS
@given(invalid_mutations())
def test_mutated_specs_are_rejected_with_a_location(tmp_path_factory, mutation):
    kind, data = mutation
    path = tmp_path_factory.mktemp("mut") / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    first = info.value.lines()[0]
    assert first.startswith(f"{path}:"), first
    assert info.value.line is not None, (kind, first)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(invalid_mutations())
def test_mutated_specs_through_the_cli(tmp_path_factory, mutation):
    import contextlib
    import io

    _, data = mutation
    path = tmp_path_factory.mktemp("cli") / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["validate", str(path)])
    assert code == 2
    assert "Traceback" not in err.getvalue()


# ----------------------------------------------------------------------------- counting and symmetry
@st.composite
def small_trees(draw):
    depth = draw(st.integers(1, 3))
    counts = [draw(st.integers(1, 3)) for _ in range(depth)]
    topo = Topology.model_validate(
        {"name": "t", "clock": "1GHz", "levels": [{"name": f"l{i}x", "count": c} for i, c in enumerate(counts)]}
    )
    usable = draw(st.lists(st.integers(0, topo.n_contexts - 1), min_size=1, max_size=topo.n_contexts, unique=True))
    return UsableTree.of(topo, usable)


@settings(max_examples=80, deadline=None)
@given(small_trees(), st.integers(0, 5))
def test_counting_equals_brute_force(tree, threads):
    assume(threads <= len(tree.usable) and len(tree.usable) <= 9)
    forms = {tree.canonical_form(dict(zip(p, range(threads)))) for p in itertools.permutations(tree.usable, threads)}
    assert count_distinct(tree, threads) == len(forms)


@settings(max_examples=80, deadline=None)
@given(small_trees(), st.integers(0, 10**6), st.data())
def test_canonical_forms_are_invariant_under_symmetries(tree, seed, data):
    threads = data.draw(st.integers(0, len(tree.usable)))
    contexts = data.draw(st.permutations(tree.usable))[:threads]
    placement = dict(zip(contexts, range(threads)))
    symmetry = tree.random_automorphism(random.Random(seed))
    assert sorted(symmetry) == sorted(symmetry.values()) == list(tree.usable)
    moved = {symmetry[c]: t for c, t in placement.items()}
    assert tree.canonical_form(moved) == tree.canonical_form(placement)
    representative = tree.canonical_placement(placement)
    assert representative == tree.canonical_placement(moved)
    assert tree.canonical_form(representative) == tree.canonical_form(placement)


def test_published_counts_on_the_t2():
    spec = load_spec("t2-ipfwd-intadd-x2")
    tree = UsableTree.of(spec.topology)
    assert count_distinct(tree, 3) == 11  # TSBSched / BlackBox base-time table
    assert count_distinct(tree, 6) == 1526  # ASPLOS'12: 2 x 3-thread IPFwd


def test_different_placements_are_not_equivalent():
    spec = load_spec("t2-ipfwd-intadd-x2")
    same_pipe = Plan.from_contexts(spec, [0, 1, 2, 8, 9, 10])
    split = Plan.from_contexts(spec, [0, 1, 4, 8, 9, 10])
    swapped_cores = Plan.from_contexts(spec, [16, 17, 18, 40, 41, 42])
    assert same_pipe.equivalent(swapped_cores, spec)
    assert not same_pipe.equivalent(split, spec)
    assert same_pipe.canonical(spec) == swapped_cores.canonical(spec)


@settings(max_examples=60, deadline=None)
@given(small_trees(), st.integers(0, 5))
def test_representatives_enumerate_each_class_once(tree, threads):
    assume(threads <= len(tree.usable))
    reps = list(tree.representatives(threads))
    forms = [tree.canonical_form(r) for r in reps]
    assert len(set(forms)) == len(forms) == count_distinct(tree, threads)
    for r in reps:
        assert sorted(r.values()) == list(range(threads)) and set(r) <= set(tree.usable)
    orbits = [size for _, size in tree.representatives_with_orbits(threads)]
    assert sum(orbits) == count_placements(threads, len(tree.usable))
