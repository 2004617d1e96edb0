"""Local search over pipeline plans on the closed form: the ``local-optima`` sampling design of the
certificate for pipeline problems (docs/design.md, "Methods and their sources": iid random
restarts climbed to a local optimum, Golden & Alt 1979; the binding version is
`solver.certify.designs`).

A plan is a mapped `Candidate` in the canonical form of `solver.pipeline.sampling`.  Its
**neighbours** are the valid plans (acyclic, within ``max_threads``; `check_candidate`) one move
away:

* **merge** two groups (tasks and contexts pooled: the replicas add up);
* **split** a group after position ``p`` of its tasks (in topological order), the second part on
  one free context, or on one of the group's own contexts when it has several;
* **move a task** to another group (its old group vanishes when emptied, freeing its contexts);
* **add a replica** on a free context, or **remove** one (of a group with several);
* **move a replica** from its context to a free one.

`climb` is steepest descent on `Evaluation.rank` (within the latency bound first, then period,
latency, threads: exact integers and fractions): from the start it moves to the best-ranked
neighbour while that is strictly better, the first generated on ties, so a climb is a function
of its start.  It ends at a **local optimum**: no neighbour ranks strictly better.
"""

from __future__ import annotations

from collections.abc import Iterator

from tasksolve.solver.pipeline.candidates import Candidate, Group, check_candidate
from tasksolve.solver.pipeline.evaluation import Evaluation, evaluate
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.solver.pipeline.sampling import canonical

#: moves before a climb stops anyway (never reached on the examples: climbs end after tens)
MAX_STEPS = 10_000


def _plan(groups: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> Candidate:
    return canonical(Candidate(tuple(Group(tuple(sorted(t)), len(c), tuple(c)) for t, c in groups if t)))


def moves(problem: PipelineProblem, cand: Candidate) -> Iterator[Candidate]:
    """Every plan one move away from `cand` (module docstring), valid or not, in a fixed order."""
    groups = [(g.tasks, tuple(g.contexts or ())) for g in cand.groups]
    used = {c for _, cs in groups for c in cs}
    free = [c for c in problem.contexts if c not in used]
    k = len(groups)
    for a in range(k):  # merge
        for b in range(a + 1, k):
            rest = [g for i, g in enumerate(groups) if i not in (a, b)]
            yield _plan(rest + [(groups[a][0] + groups[b][0], groups[a][1] + groups[b][1])])
    for a, (tasks, cs) in enumerate(groups):  # split
        rest = groups[:a] + groups[a + 1 :]
        for p in range(1, len(tasks)):
            head, tail = tasks[:p], tasks[p:]
            for c in free:
                yield _plan(rest + [(head, cs), (tail, (c,))])
            for i in range(len(cs)) if len(cs) > 1 else ():
                yield _plan(rest + [(head, cs[:i] + cs[i + 1 :]), (tail, (cs[i],))])
    for a, (tasks, cs) in enumerate(groups):  # move a task
        for t in tasks:
            for b in range(k):
                if b == a:
                    continue
                new = list(groups)
                new[a] = (tuple(x for x in tasks if x != t), cs)
                new[b] = (groups[b][0] + (t,), groups[b][1])
                yield _plan(new)
    for a, (tasks, cs) in enumerate(groups):  # replicas and contexts
        rest = groups[:a] + groups[a + 1 :]
        for c in free:
            yield _plan(rest + [(tasks, cs + (c,))])
        for i in range(len(cs)):
            if len(cs) > 1:
                yield _plan(rest + [(tasks, cs[:i] + cs[i + 1 :])])
            for c in free:
                yield _plan(rest + [(tasks, cs[:i] + (c,) + cs[i + 1 :])])


def neighbours(problem: PipelineProblem, cand: Candidate) -> list[tuple[Candidate, Evaluation]]:
    """The valid plans one move away, each with its evaluation, without repeats."""
    seen = {cand.key()}
    out = []
    for other in moves(problem, cand):
        key = other.key()
        if key in seen:
            continue
        seen.add(key)
        if not check_candidate(problem, other):
            out.append((other, evaluate(problem, other)))
    return out


def climb(problem: PipelineProblem, start: Candidate) -> tuple[Candidate, Evaluation, int]:
    """(local optimum, its evaluation, improving moves) by steepest descent from `start`."""
    cand = canonical(start)
    ev = evaluate(problem, cand)
    for steps in range(MAX_STEPS):
        best = min(neighbours(problem, cand), key=lambda item: item[1].rank(), default=None)
        if best is None or not best[1].rank() < ev.rank():
            return cand, ev, steps
        cand, ev = best
    return cand, ev, MAX_STEPS
