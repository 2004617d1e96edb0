"""A plan from the configuration LP's columns (`solver.binding.configuration_lp`).

Price-and-branch's heuristic (Desrosiers & Luebbecke, "A primer in column generation", 2005,
section 4): the columns column generation produced are kept and the *restricted master problem*
is solved in integers -- each L-domain takes one generated configuration, every thread type is
placed as often as the spec has it (a shortfall costs more than any column is worth) -- by HiGHS
(`restricted_master`).  The L-domains' configurations then become threads, whole instances
together (`place_instances`: the configuration's value credits an instance's fragment in the
L-domain holding its anchor), the threads left over take the free contexts
(`level_plan.repair`), and local search improves the plan (`lp_plan`).  The plan is valid by
construction; its value is the closed form's, the bound stays the LP's.
"""

from __future__ import annotations

import numpy as np

from tasksolve.solver.binding.configuration_lp import ConfigurationBound
from tasksolve.solver.binding.configurations import Layout, ThreadTypes
from tasksolve.solver.binding.level_plan import largest_remainder, repair
from tasksolve.solver.binding.local_search import LocalSearchResult, improve_plan
from tasksolve.solver.binding.problem import BindingProblem


def lp_plan(
    problem: BindingProblem, objective: str, bound: ConfigurationBound, seed: int, time_limit: float
) -> LocalSearchResult:
    """`configuration_plan` (its MIP with a quarter of `time_limit`) improved by iterated local
    search for the time left; raises ValueError where the rounding breaks a pin, forbid, cap or
    the latency bound."""
    import time

    start = time.perf_counter()
    plan = configuration_plan(problem, bound, time_limit=0.25 * time_limit)
    left = max(0.1, time_limit - (time.perf_counter() - start))
    return improve_plan(
        problem.spec, plan, objective=objective, seed=seed, rounds=10_000, time_limit=left, model=problem.batch
    )


def configuration_plan(problem: BindingProblem, bound: ConfigurationBound, time_limit: float = 2.0) -> list[int]:
    """A context per thread from the configuration LP's columns (`ConfigurationBound.solution`):
    the restricted master problem solved in integers (`restricted_master`: each L-domain one
    generated configuration, the type counts met as nearly as can be), or the LP's lambdas
    rounded (largest remainder) where that MIP finds nothing in `time_limit`; then placement and
    repair as for the level LP."""
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    domains = _configuration_domains(problem, layout)
    counts = restricted_master(bound, types.count, {sizes: len(d) for sizes, d in domains.items()}, time_limit)
    contents: list[list[tuple[list[int], list[int]]]] = []  # per L-domain: its cells and their types
    for sizes, kind_domains in domains.items():
        columns = [(i, column) for i, column in enumerate(bound.solution) if column[0] == sizes]
        if counts is None:
            lams = np.array([column[2] for _, column in columns])
            picks = largest_remainder(lams, min(len(kind_domains), int(round(lams.sum())))) if columns else []
        else:
            picks = [int(counts[i]) for i, _ in columns]
        chosen = [column[1] for (_, column), count in zip(columns, picks) for _ in range(count)]
        for d, domain in enumerate(kind_domains):
            config = chosen[d] if d < len(chosen) else None
            contents.append([(list(cell), _types_in(config, c)) for c, cell in enumerate(domain)])
    return place_instances(problem, types, contents)


def _types_in(config: np.ndarray | None, cell: int) -> list[int]:
    """The thread types cell `cell` of a configuration holds, one entry per thread."""
    return [] if config is None else [k for k in range(config.shape[1]) for _ in range(int(config[cell][k]))]


def place_instances(
    problem: BindingProblem, types: ThreadTypes, domains: list[list[tuple[list[int], list[int]]]]
) -> list[int]:
    """Threads into L-domains whose cells want given types, whole instances together: for each
    anchor slot of an L-domain, an instance none of whose threads is placed yet takes it and the
    slots of its other types there (the configuration's value credits the instance's fragment in
    the L-domain, `configurations`); the slots left take any free thread of their type, the
    threads left the free contexts (`repair`)."""
    key = {name: k for k, name in enumerate(types.names)}
    kind_of = [key[t.type_key] for t in problem.spec.threads]
    threads_of: dict[int, list[int]] = {}
    for t, i in enumerate(problem.instance_of):
        threads_of.setdefault(i, []).append(t)
    app_of = {i: problem.spec.threads[ts[0]].app for i, ts in threads_of.items()}
    placed = [-1] * problem.n_threads
    free_contexts: list[int] = []
    for cells in domains:
        slots: dict[int, list[int]] = {}
        for contexts, wanted in cells:
            for c, k in zip(contexts, wanted):
                slots.setdefault(k, []).append(c)
            free_contexts += contexts[len(wanted) :]
        for app, anchor in types.anchor.items():
            for i in [i for i, a in app_of.items() if a == app]:
                if not slots.get(anchor):
                    break
                if any(placed[t] >= 0 for t in threads_of[i]):
                    continue
                for t in threads_of[i]:
                    if slots.get(kind_of[t]):
                        placed[t] = slots[kind_of[t]].pop(0)
        for k, contexts in slots.items():
            for c in contexts:
                t = next((t for t in range(problem.n_threads) if kind_of[t] == k and placed[t] < 0), None)
                if t is None:
                    free_contexts.append(c)
                else:
                    placed[t] = c
    return repair(problem, placed, free_contexts)


def restricted_master(
    bound: ConfigurationBound, demand: np.ndarray, domains: dict[tuple[int, ...], int], time_limit: float
) -> np.ndarray | None:
    """Integer copies of each generated column (price-and-branch's heuristic, Desrosiers &
    Luebbecke 2005, section 4): maximise the columns' values, at most ``domains[kind]`` L-domains
    of each kind, every thread type placed ``demand[k]`` times less a shortfall that costs more
    than any column is worth.  None where HiGHS finds no integer point in `time_limit`."""
    from scipy.optimize import Bounds, LinearConstraint

    from tasksolve.solver.highs import milp

    columns = bound.solution
    if not columns:
        return None
    n, K = len(columns), len(demand)
    counts = np.array([column[1].sum(axis=0) for column in columns], dtype=float)  # (n, K)
    values = np.array([column[3] for column in columns])
    scale = max(1.0, float(values.max()))
    penalty = 2.0 * float(values.max() / scale) + 1.0  # a missing thread costs more than a column earns
    kinds = list(domains)
    kind_rows = np.array([[1.0 if column[0] == kind else 0.0 for column in columns] for kind in kinds])
    a = np.block([[counts.T, np.eye(K)], [kind_rows, np.zeros((len(kinds), K))]])
    upper = np.concatenate([demand, [domains[kind] for kind in kinds]]).astype(float)
    lower = np.concatenate([demand, np.zeros(len(kinds))]).astype(float)
    result = milp(
        np.concatenate([-values / scale, np.full(K, penalty)]),
        constraints=LinearConstraint(a, lower, upper),
        integrality=np.ones(n + K),
        bounds=Bounds(0, np.inf),
        options={"time_limit": max(0.1, time_limit), "mip_rel_gap": 1e-4},
    )
    if result.x is None:
        return None
    return np.rint(result.x[:n]).astype(int)


def _configuration_domains(problem: BindingProblem, layout: Layout) -> dict[tuple[int, ...], list[list[list[int]]]]:
    """Per kind of `layout.kinds` (cell sizes): its L-domains, each a list of cells (usable
    contexts, largest first, as the configurations list them)."""
    topo = problem.topology
    usable = set(problem.usable)
    out: dict[tuple[int, ...], list[list[list[int]]]] = {}
    for domain in range(topo.domain_count(layout.level)):
        contexts = topo.contexts_of(layout.level, domain)
        stride = topo.strides[layout.cell_level] if layout.cell_level is not None else len(contexts)
        cells = [
            [c for c in range(start, start + stride) if c in usable]
            for start in range(contexts.start, contexts.stop, stride)
        ]
        cells = sorted((cell for cell in cells if cell), key=len, reverse=True)
        key = tuple(len(cell) for cell in cells)
        if key in layout.kinds:
            out.setdefault(key, []).append(cells)
    return out
