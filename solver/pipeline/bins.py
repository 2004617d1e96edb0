"""Where placement matters in the pipeline's CP-SAT model (`solver.pipeline.model`): the sharing
levels at which a message cost changes, a ``max_threads`` cap applies or a demanded resource is
shared, and the **bins** -- the domains of the deepest such level -- whose contexts are
interchangeable for every cost and every load; the interchangeable sibling domains among them
(symmetry breaking)."""

from __future__ import annotations

from dataclasses import dataclass

from tasksolve.solver.pipeline.problem import PipelineProblem


@dataclass
class Bins:
    """Where placement matters: the *effective* sharing levels (where some message cost changes,
    a `max_threads` cap applies or a demanded resource is shared) and the **bins** -- the domains
    of the deepest effective level (one bin when there is none) -- whose contexts are
    interchangeable for every cost and every load."""

    effective: list[int]  # comm levels, cap levels and resource levels: the tree's levels
    comm: list[int]  # levels where some message cost changes
    level: int
    contexts: list[list[int]]  # usable contexts of each bin
    domain: dict[int, list[int]]  # effective level -> dense domain index of each bin
    tree: list  # nested lists of bin indices, by effective level

    @classmethod
    def of(cls, problem: PipelineProblem) -> Bins:
        K = problem.n_levels
        comm = set()
        for e in problem.edges:
            for k in range(K - 1):
                if e.at(k) != e.at(k - 1):
                    comm.add(k)
        effective = set(comm)
        for level, _ in problem.max_threads:
            if 0 <= level < K - 1:
                effective.add(level)
        effective |= {r.level for r in problem.resources if r.level >= 0}
        eff = sorted(effective)
        level = eff[-1] if eff else -1
        by: dict[int, list[int]] = {}
        for c in problem.contexts:
            by.setdefault(0 if level < 0 else c // problem.strides[level], []).append(c)
        contexts = [by[d] for d in sorted(by)]
        domain: dict[int, list[int]] = {}
        for k in eff:
            raw = [cs[0] // problem.strides[k] for cs in contexts]
            dense = {d: i for i, d in enumerate(sorted(set(raw)))}
            domain[k] = [dense[d] for d in raw]

        def subtree(bins: list[int], depth: int):
            if depth >= len(eff) or eff[depth] == level:
                return bins
            k = eff[depth]
            groups: dict[int, list[int]] = {}
            for b in bins:
                groups.setdefault(domain[k][b], []).append(b)
            return [subtree(groups[d], depth + 1) for d in sorted(groups)]

        tree = subtree(list(range(len(contexts))), 0)
        return cls(eff, sorted(comm), level, contexts, domain, tree)

    def leaves(self, node) -> list[int]:
        return [node] if isinstance(node, int) else [b for child in node for b in self.leaves(child)]

    def shape(self, node):
        return len(self.contexts[node]) if isinstance(node, int) else tuple(self.shape(c) for c in node)

    def _siblings(self, node) -> list[list]:
        """The children of `node` grouped by shape: the groups of two or more are interchangeable."""
        classes: dict = {}
        for child in node:
            classes.setdefault(self.shape(child), []).append(child)
        return [members for members in classes.values() if len(members) > 1]

    def sibling_classes(self):
        """Lists of interchangeable sibling subtrees (same parent, same shape), in index order."""
        out = []

        def walk(node):
            if isinstance(node, int):
                return
            out.extend(self._siblings(node))
            for child in node:
                walk(child)

        walk(self.tree)
        return out

    def canonical(self, counts: list[list[int]]) -> list[list[int]]:
        """Per-bin count vectors permuted among interchangeable siblings so that loads do not
        increase along each class (the symmetry breaking of the model)."""
        content = {b: list(counts[b]) for b in range(len(self.contexts))}

        def load(node) -> int:
            return sum(sum(content[b]) for b in self.leaves(node))

        def walk(node):
            if isinstance(node, int):
                return
            for members in self._siblings(node):
                snapshot = [[content[b] for b in self.leaves(c)] for c in members]
                order = sorted(range(len(members)), key=lambda i: -sum(map(sum, snapshot[i])))
                for target, source in zip(members, order):
                    for b, vec in zip(self.leaves(target), snapshot[source]):
                        content[b] = vec
            for child in node:
                walk(child)

        walk(self.tree)
        return [content[b] for b in range(len(self.contexts))]
