"""Symmetry breaking for the binding model, derived from the topology and the constraints.

Two sibling domains are interchangeable when their subtrees have the same *labelled* shape: the
same tree of usable contexts, where each context is labelled with the set of threads allowed on
it (pins and forbids make some contexts special).  Exchanging them maps plans to plans of equal
value (resources are per domain, communication costs depend only on the innermost shared level,
caps are per level), so among interchangeable siblings C_0 < C_1 < ... of one parent we keep only
plans in *value-precedence* order (Law & Lee, "Global constraints for integer and set value
precedence", CP 2004): a thread may enter C_j only if an earlier thread (in `spec.threads` order)
entered C_{j-1}.  Applied at every level, exactly one plan of each symmetry class remains: the
one `representative` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import UsableTree

Shape = tuple


@dataclass
class SiblingClasses:
    """Interchangeable sibling domains of the usable tree of a binding problem."""

    problem: BindingProblem

    @cached_property
    def tree(self) -> UsableTree:
        return UsableTree.of(self.problem.topology, self.problem.usable)

    @property
    def depth(self) -> int:
        return self.tree.depth

    @property
    def children(self) -> dict[tuple[int, int], list[int]]:
        return self.tree.children

    @cached_property
    def labels(self) -> dict[int, tuple[int, ...]]:
        """Context -> the threads allowed on it."""
        out: dict[int, list[int]] = {c: [] for c in self.problem.usable}
        for thread, contexts in enumerate(self.problem.allowed):
            for context in contexts:
                out.setdefault(context, []).append(thread)
        return {c: tuple(ts) for c, ts in out.items()}

    @cached_property
    def shapes(self) -> dict[tuple[int, int], Shape]:
        return self.tree.labelled_shapes({c: ("leaf", label) for c, label in self.labels.items()})

    def classes(self) -> list[tuple[int, list[int]]]:
        """(level of the members, sorted member domains) for every class of >= 2 siblings."""
        out = []
        for (level, _domain), kids in sorted(self.children.items()):
            groups: dict[Shape, list[int]] = {}
            for kid in kids:
                groups.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
            out.extend((level + 1, members) for members in groups.values() if len(members) >= 2)
        return out

    def leaves(self, level: int, domain: int) -> list[int]:
        return self.tree.leaves(level, domain)

    def representative(self, contexts: list[int]) -> list[int]:
        """The plan of the same symmetry class that satisfies value precedence everywhere."""
        where = {c: t for t, c in enumerate(contexts)}
        mapping: dict[int, int] = {}

        def first_thread(level: int, domain: int) -> int:
            found = [where[c] for c in self.leaves(level, domain) if c in where]
            return min(found) if found else len(contexts)

        def move(level: int, source: int, target: int) -> None:
            if level == self.depth - 1:
                mapping[source] = target
                return
            sources: dict[Shape, list[int]] = {}
            targets: dict[Shape, list[int]] = {}
            for kid in self.children[(level, source)]:
                sources.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
            for kid in self.children[(level, target)]:
                targets.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
            for shape, members in sources.items():
                ordered = sorted(members, key=lambda kid: (first_thread(level + 1, kid), kid))
                for kid, slot in zip(ordered, targets[shape]):
                    move(level + 1, kid, slot)

        move(-1, 0, 0)
        return [mapping[c] for c in contexts]


def add_value_precedence(model, x: list[dict[int, object]], classes: SiblingClasses) -> int:
    """Add the value-precedence constraints for every class; returns how many were added.

    `x[t][c]` is the literal "thread t runs on context c".
    """
    added = 0
    n_threads = len(x)
    for level, members in classes.classes():
        member_of = {c: j for j, m in enumerate(members) for c in classes.leaves(level, m)}
        seen_prev = [None] * len(members)  # seen[j] after the threads processed so far
        for t in range(n_threads):
            in_member: list[list] = [[] for _ in members]  # one pass: linear in threads x contexts
            for c, lit in x[t].items():
                if c in member_of:
                    in_member[member_of[c]].append(lit)
            if not any(in_member):
                continue
            # a thread may enter member j only if some earlier thread entered member j-1
            for j in range(1, len(members)):
                if not in_member[j]:
                    continue
                if seen_prev[j - 1] is None:
                    for lit in in_member[j]:
                        model.add(lit == 0)
                else:
                    model.add(sum(in_member[j]) <= seen_prev[j - 1])
                added += 1
            # update seen[j] = seen_prev[j] or (t in member j), for members that can be followed
            seen_now = list(seen_prev)
            for j in range(len(members) - 1):
                if not in_member[j]:
                    continue
                var = model.new_bool_var(f"seen_l{level}_m{members[j]}_t{t}")
                terms = list(in_member[j]) + ([seen_prev[j]] if seen_prev[j] is not None else [])
                model.add_max_equality(var, terms)
                seen_now[j] = var
            seen_prev = seen_now
    return added
