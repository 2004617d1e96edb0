"""Random pipeline plans (`solver.pipeline.sampling`) and the local search over them
(`solver.pipeline.local_search`), against brute-force enumeration of small problems."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from tasksolve.solver.pipeline.brute import context_assignments, replica_vectors, set_partitions
from tasksolve.solver.pipeline.candidates import Candidate, Group, group_order
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.local_search import climb, neighbours
from tasksolve.solver.pipeline.plans import pipeline_problems, to_plan
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.solver.pipeline.sampling import canonical, context_sets, decode, encode, is_valid, random_candidate
from tests.pipeline.helpers import dags, make_spec

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=25)


def diamond(latency_max=None) -> PipelineProblem:
    """a -> b, a -> c, b -> d, c -> d on 3 contexts, two in one pair: placement matters."""
    spec = make_spec(
        {"a": 20, "b": 30, "c": 25, "d": 10},
        [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
        levels=[{"name": "pair", "count": 2}, {"name": "core", "count": 2}],
        communication={"pair": 2, "machine": 9},
        contexts=["pair0.core0", "pair0.core1", "pair1.core0"],
    )
    return PipelineProblem.from_spec(spec, latency_max=latency_max)


def brute_valid(problem: PipelineProblem) -> set:
    """Every valid plan, by enumeration (`solver.pipeline.brute`'s generators)."""
    out = set()
    for parts in set_partitions(problem.n):
        base = Candidate(tuple(Group(tuple(p)) for p in parts))
        if len(parts) > problem.n_contexts or group_order(problem, base) is None:
            continue
        for reps in replica_vectors(len(parts), problem.n_contexts):
            for cs in context_assignments(reps, problem.contexts):
                cand = canonical(Candidate(tuple(Group(tuple(p), r, c) for p, r, c in zip(parts, reps, cs))))
                if is_valid(problem, cand):
                    out.add(cand.key())
    return out


def orders(problem: PipelineProblem):
    """Every topological order with its probability under step 1 (a uniform ready task)."""

    def grow(prefix, prob):
        if len(prefix) == problem.n:
            yield tuple(prefix), prob
            return
        ready = [t for t in range(problem.n) if t not in prefix and all(p in prefix for p in problem.preds[t])]
        for t in ready:
            yield from grow(prefix + [t], prob / len(ready))

    yield from grow([], Fraction(1))


def stated_probabilities(problem: PipelineProblem) -> dict:
    """The module docstring's formula, over every order, cut set and context assignment."""
    from itertools import combinations

    n, c = problem.n, problem.n_contexts
    kmax = min(n, c)
    mass: dict = Counter()
    for order, p_order in orders(problem):
        for k in range(1, kmax + 1):
            for cuts in combinations(range(1, n), k - 1):
                segments = [order[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
                p_groups = p_order / kmax / comb(n - 1, k - 1)
                # every way to give the k groups disjoint non-empty context sets, each 1 / A(C, k)
                for reps in replica_vectors(k, c):
                    for cs in context_assignments(reps, problem.contexts):
                        cand = canonical(
                            Candidate(tuple(Group(tuple(sorted(s)), len(x), x) for s, x in zip(segments, cs)))
                        )
                        if is_valid(problem, cand):
                            mass[cand.key()] += p_groups / context_sets(c, k)
    total = sum(mass.values())
    return {key: m / total for key, m in mass.items()}


def test_context_sets_count_the_brute_force_assignments():
    for contexts in range(1, 6):
        for k in range(1, contexts + 1):
            pool = tuple(range(contexts))
            count = sum(1 for reps in replica_vectors(k, contexts) for _ in context_assignments(reps, pool))
            assert context_sets(contexts, k) == count


@pytest.mark.parametrize("latency_max", [None, 100])
def test_random_plans_cover_every_valid_plan_with_the_stated_probabilities(latency_max):
    problem = diamond(latency_max)
    expected = stated_probabilities(problem)
    assert expected and set(expected) == brute_valid(problem)  # the support is every valid plan, no other
    rng = np.random.default_rng(7)
    draws = 20_000
    seen = Counter(random_candidate(problem, rng).key() for _ in range(draws))
    assert set(seen) <= set(expected)
    keys = sorted(expected)
    observed = np.array([seen.get(k, 0) for k in keys], dtype=float)
    wanted = np.array([float(expected[k]) * draws for k in keys])
    assert wanted.min() >= 5  # the chi-square approximation holds
    assert stats.chisquare(observed, wanted).pvalue > 1e-4


@settings(**SETTINGS)
@given(dags(max_tasks=6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_random_plans_are_valid_pipeline_plans(dag, contexts, seed):
    tasks, edges = dag
    spec = make_spec(tasks, edges, levels=[{"name": "cpu", "count": contexts}], communication={"machine": 3})
    problem = PipelineProblem.from_spec(spec, latency_max=None)
    cand = random_candidate(problem, np.random.default_rng(seed))
    assert is_valid(problem, cand)
    assert pipeline_problems(spec, to_plan(problem, cand)) == []
    assert decode(encode(cand)) == cand


def test_an_unmeetable_bound_is_refused_in_words():
    problem = diamond(None).with_bound(1)
    with pytest.raises(PipelineError, match="no valid random pipeline plan"):
        random_candidate(problem, np.random.default_rng(0), max_draws=50)


@settings(**SETTINGS)
@given(dags(max_tasks=6), st.integers(2, 4), st.integers(0, 2**32 - 1), st.sampled_from([None, 1.2, 1.6]))
def test_local_search_only_improves_and_ends_at_a_local_optimum(dag, contexts, seed, slack):
    tasks, edges = dag
    spec = make_spec(
        tasks,
        edges,
        levels=[{"name": "pair", "count": 2}, {"name": "core", "count": 2}],
        communication={"pair": 2, "machine": 9},
        contexts=[f"pair{i // 2}.core{i % 2}" for i in range(contexts)],
    )
    problem = PipelineProblem.from_spec(spec, latency_max=None)
    if slack is not None:
        problem = problem.with_bound(int(problem.critical_path * slack) + 20)
    try:
        start = random_candidate(problem, np.random.default_rng(seed), max_draws=2000)
    except PipelineError:
        return  # no valid plan within a tight bound
    best, ev, steps = climb(problem, start)
    start_rank = evaluate(problem, canonical(start)).rank()
    assert ev == evaluate(problem, best)
    assert ev.rank() < start_rank if steps else ev.rank() == start_rank
    assert is_valid(problem, best)
    assert all(not other.rank() < ev.rank() for _, other in neighbours(problem, best))


def test_local_search_reaches_the_brute_force_optimum_on_a_small_problem():
    """Not a property of local search in general: on the diamond every restart of 20 must reach it."""
    from tasksolve.solver.pipeline.brute import brute_force

    problem = diamond(None)
    truth, _, _ = brute_force(problem)
    rng = np.random.default_rng(1)
    finals = [climb(problem, random_candidate(problem, rng))[1] for _ in range(20)]
    assert min(ev.period for ev in finals) == truth.period
