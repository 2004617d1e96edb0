"""Name the spec constraints that conflict when a binding problem has no solution.

Each constraint group (`BindingProblem.constraint_groups`: constraints.contexts, each pin, each
forbid, the caps, the latency bound) is put behind an assumption literal; CP-SAT's
``SufficientAssumptionsForInfeasibility`` returns a subset that is infeasible on its own, which we
then shrink to a minimal one (deletion filter: drop a group, keep the drop when the rest is still
infeasible).  The model used here has no objective and no symmetry breaking, as assumptions
require.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from tasksolve.solver import cpsat
from tasksolve.solver.binding.model import BindingModel
from tasksolve.solver.binding.problem import BindingProblem, describe_group


def _infeasible_with(problem: BindingProblem, groups: list[str], time_limit: float) -> tuple[bool | None, list[str]]:
    """(infeasible?, sufficient subset) with only `groups` assumed true."""
    model = BindingModel(problem, "total_throughput", symmetry=False, assumptions=True)
    literals = model.assumption_literals
    chosen = [literals[g] for g in groups if g in literals]
    for group, literal in literals.items():
        if group not in groups:
            model.model.add(literal == 0)
    model.model.clear_assumptions()
    model.model.add_assumptions(chosen)
    solver = cpsat.make_solver(time_limit=time_limit, workers=1)
    status = cpsat.solve(solver, model.model)
    if status == cp_model.INFEASIBLE:
        core_indices = set(solver.sufficient_assumptions_for_infeasibility())
        core = [g for g in groups if g in literals and literals[g].index in core_indices]
        return True, core
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return False, []
    return None, []


def conflicting_constraints(problem: BindingProblem, time_limit: float = 10.0) -> list[str] | None:
    """A minimal set of constraint groups that cannot hold together; [] when the placement
    problem is infeasible without any constraint; None when it could not be decided in time."""
    groups = problem.constraint_groups()
    infeasible, core = _infeasible_with(problem, groups, time_limit)
    if infeasible is None:
        return None
    if not infeasible:
        return None
    core = core or groups
    for group in list(core):
        trial = [g for g in core if g != group]
        still, smaller = _infeasible_with(problem, trial, time_limit)
        if still:
            core = smaller or trial
    return core


def explain_infeasible(problem: BindingProblem, time_limit: float = 10.0) -> str:
    """One message naming the constraints that conflict."""
    core = conflicting_constraints(problem, time_limit)
    if core is None:
        return "no plan satisfies the constraints (CP-SAT proved it, but could not isolate which ones in time)"
    if not core:
        return "no plan exists even without constraints: more threads than hardware contexts"
    described = "; ".join(describe_group(problem.spec, g) for g in core)
    message = f"no plan satisfies {described}" if len(core) == 1 else f"these constraints conflict: {described}"
    if "latency_max" in core:  # located at the bound, with how far off it is
        others = "" if core == ["latency_max"] else " under the other constraints"
        return located(problem.spec, ("constraints", "latency_max"), f"{message}; {least_latency(problem, others)}")
    return message


def least_latency(problem: BindingProblem, others: str = "", time_limit: float = 10.0) -> str:
    """The least closed-form latency any plan reaches under the other constraints, in words: what
    `latency_max` would have to allow (CP-SAT with the latency objective, the bound left out)."""
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.specs.display import seconds

    free = BindingProblem(problem.spec, ignore=problem.ignore | {"latency_max"})
    result = solve_binding(free, objective="latency", time_limit=time_limit, workers=1, local_search=False)
    best = result.best
    if best is None:
        return f"CP-SAT found no plan without it within {time_limit:g} s to say how far off it is"
    if best.status == "OPTIMAL":
        return f"the least latency any plan reaches{others} on the closed form is {seconds(best.objective)} (proven by CP-SAT)"
    return (
        f"the least latency any plan reaches{others} on the closed form is between {seconds(best.bound)} and "
        f"{seconds(best.objective)} (CP-SAT within {time_limit:g} s)"
    )


def located(spec, path: tuple, message: str) -> str:
    """``file:line:col: constraints.latency_max: message`` where the spec's file says where the field
    is; the field's path and the message otherwise."""
    from tasksolve.specs.errors import Problem, SpecsError
    from tasksolve.specs.yamlio import locate, read_yaml

    if spec.source:
        try:
            _, locations = read_yaml(spec.source)
            return str(locate(spec.source, locations, [Problem(path, message)]))
        except (SpecsError, OSError):  # the file changed or went away since it was loaded
            pass
    return f"{'.'.join(path)}: {message}"
