"""Hardware symmetry: canonical forms of placements, random symmetries, representatives.

The usable contexts of a topology form a rooted tree (machine > level 0 domains > ... >
contexts), pruned of domains with no usable context.  Its automorphisms permute sibling domains
whose subtrees have the same shape, recursively (identical cores, pipes, strands are
interchangeable).  A placement labels some leaves with thread indices; two placements are
equivalent iff an automorphism maps one onto the other, iff their canonical forms are equal.

Canonical form (the AHU tree-isomorphism encoding): a leaf is its thread index (-1 when empty);
an inner node is the sorted tuple of its children's forms.  Empty leaves are kept, so a form also
encodes the shape of the subtree, and sorting only ever exchanges children of equal shape.

Kinds of core (`specs.cpu_kinds`) break symmetry: a context's shape is then its kind's name (a
string, not ``()``) and its form ``(kind, thread)``, so a P-core and an E-core are never exchanged
(`is_leaf` tells leaf shapes from inner ones); so do devices (`specs.devices`): a context's shape
also says which level it shares with each device.  An irregular tree is held padded
(`Topology.present`): its missing domains hold no usable context, so they are pruned like any
domain without one.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from math import perm

from tasksolve.specs.devices import device_level
from tasksolve.specs.topology import Topology

Form = int | str | tuple


def is_leaf(shape: Form) -> bool:
    """A context's shape: ``()``, or its kind's name on a topology with kinds."""
    return not isinstance(shape, tuple) or shape == ()


def _context_label(topo: Topology, context: int) -> str:
    """``P`` (its kind), ``P|nic0@0`` (and the level it shares with each device)."""
    label = topo.kind_of(context) if topo.kinds else ""
    for device in sorted(topo.devices or {}):
        label += f"|{device}@{device_level(topo, device, context)}"
    return label


@dataclass
class UsableTree:
    """The tree of usable contexts: for each inner node, its non-empty children."""

    topology: Topology
    usable: tuple[int, ...]

    @classmethod
    def of(cls, topology: Topology, usable: Sequence[int] | None = None) -> UsableTree:
        """The tree of `usable` (None: every existing context -- never a padded one of an
        irregular tree, `Topology.present_contexts`)."""
        usable = tuple(sorted(set(topology.present_contexts if usable is None else usable)))
        return cls(topology, usable)

    @cached_property
    def depth(self) -> int:
        return len(self.topology.levels)

    @cached_property
    def kinds(self) -> dict[int, str] | None:
        """Each usable context's kind of core and its distance to each device (the level it
        shares with the device's domain, `specs.devices`): contexts that differ in either are
        never exchanged.  None on a topology with neither."""
        topo = self.topology
        if not topo.kinds and not topo.devices:
            return None
        return {c: _context_label(topo, c) for c in self.usable}

    @cached_property
    def children(self) -> dict[tuple[int, int], list[int]]:
        """(level, domain) -> sorted domains of level+1 below it holding a usable context.

        Level -1 is the machine (domain 0); the children of the last inner level are contexts.
        """
        topo = self.topology
        out: dict[tuple[int, int], set[int]] = {}
        for context in self.usable:
            for level in range(-1, self.depth - 1):
                parent = topo.domain_of(context, level)
                child = topo.domain_of(context, level + 1)
                out.setdefault((level, parent), set()).add(child)
        return {key: sorted(value) for key, value in out.items()}

    @cached_property
    def shapes(self) -> dict[tuple[int, int], Form]:
        """(level, domain) -> shape of its usable subtree (a context's shape is ``()``)."""
        return self.labelled_shapes({})

    def labelled_shapes(self, labels: Mapping[int, Form]) -> dict[tuple[int, int], Form]:
        """Shapes of the subtrees when each context carries a label (``()`` when absent):
        two subtrees of equal labelled shape are exchanged by a symmetry that keeps labels."""
        shapes: dict[tuple[int, int], Form] = {}
        kinds = self.kinds
        for context in self.usable:
            if kinds is None:
                shapes[(self.depth - 1, context)] = labels.get(context, ())
            else:
                kind = kinds[context]
                shapes[(self.depth - 1, context)] = (kind, labels[context]) if context in labels else kind
        for level in range(self.depth - 2, -2, -1):
            for (lvl, domain), kids in self.children.items():
                if lvl == level:
                    shapes[(lvl, domain)] = tuple(sorted(shapes[(lvl + 1, k)] for k in kids))
        return shapes

    def leaves(self, level: int, domain: int) -> list[int]:
        """The usable contexts in a domain (level -1: the machine), in index order."""
        if level == self.depth - 1:
            return [domain]
        return [c for k in self.children[(level, domain)] for c in self.leaves(level + 1, k)]

    # ------------------------------------------------------------------ canonical forms
    def canonical_form(self, placement: Mapping[int, int]) -> Form:
        """Canonical form of a placement given as {context: thread index}."""

        kinds = self.kinds

        def form(level: int, domain: int) -> Form:
            if level == self.depth - 1:
                thread = placement.get(domain, -1)
                return thread if kinds is None else (kinds[domain], thread)
            return tuple(sorted(form(level + 1, k) for k in self.children[(level, domain)]))

        return form(-1, 0)

    def canonical_placement(self, placement: Mapping[int, int]) -> dict[int, int]:
        """A representative of the placement's class: {context: thread}, the same for every
        equivalent placement (children of equal shape are refilled in canonical order)."""
        result: dict[int, int] = {}

        def place(level: int, domain: int, content: Form) -> None:
            if level == self.depth - 1:
                thread = content if self.kinds is None else content[1]  # type: ignore[index]
                if thread != -1:
                    result[domain] = thread  # type: ignore[assignment]
                return
            kids = self.children[(level, domain)]
            by_shape: dict[Form, list[int]] = {}
            for kid in kids:
                by_shape.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
            # content is sorted; hand each child form to the next free slot of its shape
            free = {shape: list(slots) for shape, slots in by_shape.items()}
            for child_form in content:  # type: ignore[union-attr]
                shape = self._shape_of(child_form, level + 1)
                place(level + 1, free[shape].pop(0), child_form)

        place(-1, 0, self.canonical_form(placement))
        return result

    def _shape_of(self, child_form: Form, level: int) -> Form:
        if level == self.depth - 1:
            return () if self.kinds is None else child_form[0]  # type: ignore[index]
        return tuple(sorted(self._shape_of(f, level + 1) for f in child_form))  # type: ignore[union-attr]

    # ------------------------------------------------------------------ enumeration
    def representatives(self, threads: int) -> Iterator[dict[int, int]]:
        """One placement {context: thread} of each symmetry class of `threads` threads.

        The generation mirrors the count of `specs.counting`: at each node the threads are
        split among the classes of identical children (an ordered split, classes differ), then
        within a class into at most ``m`` unordered blocks placed on the class's first children
        (blocks ordered by their smallest thread), recursively.
        """
        return (placement for placement, _ in self.representatives_with_orbits(threads))

    def representatives_with_orbits(self, threads: int) -> Iterator[tuple[dict[int, int], int]]:
        """`representatives`, each with the size of its class: the number of raw placements
        (injective maps) equivalent to it.  A class of ``m`` interchangeable children holding
        ``b`` blocks contributes ``m! / (m - b)!`` (which children hold the blocks), times the
        sizes inside each child."""
        if threads > len(self.usable):
            return iter(())
        return self._place(-1, 0, tuple(range(threads)))

    def _place(self, level: int, domain: int, threads: tuple[int, ...]) -> Iterator[tuple[dict[int, int], int]]:
        if not threads:
            yield {}, 1
            return
        if level == self.depth - 1:
            if len(threads) == 1:
                yield {domain: threads[0]}, 1
            return
        classes: dict[Form, list[int]] = {}
        for kid in self.children[(level, domain)]:
            classes.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
        groups = list(classes.values())
        for split in _ordered_splits(threads, len(groups)):
            yield from self._place_groups(level, groups, split)

    def _place_groups(self, level: int, groups: list[list[int]], split: list[tuple[int, ...]]):
        if not groups:
            yield {}, 1
            return
        members, part = groups[0], split[0]
        capacity = len(self.leaves(level + 1, members[0]))
        for blocks in _set_partitions(part, len(members), capacity):
            ways = perm(len(members), len(blocks))
            for inside, inside_orbit in self._place_blocks(level + 1, members, blocks):
                for rest, rest_orbit in self._place_groups(level, groups[1:], split[1:]):
                    yield {**inside, **rest}, ways * inside_orbit * rest_orbit

    def _place_blocks(self, level: int, members: list[int], blocks: list[tuple[int, ...]]):
        if not blocks:
            yield {}, 1
            return
        for first, first_orbit in self._place(level, members[0], blocks[0]):
            for rest, rest_orbit in self._place_blocks(level, members[1:], blocks[1:]):
                yield {**first, **rest}, first_orbit * rest_orbit

    # ------------------------------------------------------------------ symmetries
    def random_automorphism(self, rng: random.Random) -> dict[int, int]:
        """A uniformly drawn symmetry of the usable tree, as a permutation {context: context}."""
        mapping: dict[int, int] = {}

        def permute(level: int, source: int, target: int) -> None:
            """Map the subtree at `source` onto the isomorphic subtree at `target`."""
            if level == self.depth - 1:
                mapping[source] = target
                return
            src_kids = self.children[(level, source)]
            dst_kids = self.children[(level, target)]
            by_shape_dst: dict[Form, list[int]] = {}
            for kid in dst_kids:
                by_shape_dst.setdefault(self.shapes[(level + 1, kid)], []).append(kid)
            for slots in by_shape_dst.values():
                rng.shuffle(slots)
            for kid in src_kids:
                permute(level + 1, kid, by_shape_dst[self.shapes[(level + 1, kid)]].pop())

        permute(-1, 0, 0)
        return mapping


def _ordered_splits(items: tuple[int, ...], parts: int):
    """Every way to deal `items` into `parts` labelled (possibly empty) parts, order kept."""
    if parts == 1:
        yield [items]
        return
    n = len(items)
    for mask in range(parts**n):
        buckets: list[list[int]] = [[] for _ in range(parts)]
        code = mask
        for item in items:
            buckets[code % parts].append(item)
            code //= parts
        yield [tuple(b) for b in buckets]


def _set_partitions(items: tuple[int, ...], most: int, largest: int | None = None):
    """Set partitions of `items` into at most `most` blocks of at most `largest` items each (None:
    any size), blocks ordered by smallest item.  A block only grows as items join, so a block
    over `largest` is never extended (20 threads on 24 single-context cores: one partition, not
    Bell(20) ~ 5e13 filtered afterwards)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _set_partitions(rest, most, largest):
        # `first` joins an existing block, or opens a new one (it is the smallest: goes first)
        for i in range(len(partition)):
            if largest is None or len(partition[i]) < largest:
                yield sorted([tuple(sorted((first,) + partition[i]))] + partition[:i] + partition[i + 1 :], key=min)
        if len(partition) < most:
            yield [(first,)] + partition
