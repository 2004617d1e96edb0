"""One block of contexts per application instance of a pipeline workload (docs/design.md, the
LATA/pipeline bullet, "Several instances").

A pipeline problem groups the tasks of one instance; a workload asking for ``k`` instances gets
``k`` **blocks** of usable contexts, one per instance, that are **isomorphic**: position ``j`` of
block ``i`` is the image of position ``j`` of block 0, and every pair of positions shares the same
innermost topology level in every block (so every message costs the same and every resource
domain is shared alike) and has the same kind of core.  The one-instance problem is solved on
block 0 and its plan mapped onto every other block by that correspondence.

The blocks are made of whole domains of one level: for each level, outermost first, the usable
contexts are grouped by domain (a **unit**), and the units are dealt out in topology order, ``m``
consecutive units per block with ``m = units // k`` -- all of them; or those of each **shape**
(the same usable offsets and kinds of core inside the domain) dealt out apart and put side by
side (a hybrid's P-core and E-core domains: each block gets its share of both); or those of one
shape alone.  A split whose blocks are not isomorphic is skipped.  The split covering the most
contexts wins, the outermost level on a tie, so instances share no inner domain they need not
share.  ``constraints.max_threads`` caps apply to every instance's threads together: a block is
given ``cap // s`` per domain, ``s`` the most blocks meeting in one domain of that level (a split
where that is 0 is skipped).  No split at all: `NoBlocks`, naming the instance count and the
usable contexts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tasksolve.solver.errors import BadProblemError


class NoBlocks(BadProblemError):
    """The instances cannot each get a block (`PipelineProblem.from_spec` raises it as a
    `NoBlocks`)."""


@dataclass(frozen=True)
class Blocks:
    """The blocks of one workload: ``blocks[i]`` the contexts of instance ``i``, in corresponding
    positions; `level` the level whose domains they are made of (index into the topology's
    levels), `units` how many of its domains each holds; `unused` the usable contexts in no
    block; `caps` the ``max_threads`` caps of one block (level, cap per domain)."""

    blocks: tuple[tuple[int, ...], ...]
    level: int
    units: int
    unused: tuple[int, ...] = ()
    caps: tuple[tuple[int, int], ...] = ()

    @property
    def size(self) -> int:
        return len(self.blocks[0])

    @property
    def covered(self) -> int:
        return len(self.blocks) * self.size

    def describe(self, level_names: Sequence[str]) -> str:
        """``3 blocks of 4 contexts (2 `core` domains each)``."""
        what = "context" if self.level == len(level_names) - 1 else f"`{level_names[self.level]}` domain"
        return (
            f"{len(self.blocks)} blocks of {self.size} contexts ({self.units} {what}{'s' if self.units != 1 else ''}"
            " each)"
        )


def pair_level(strides: Sequence[int], a: int, b: int) -> int:
    """The innermost level whose domain holds both contexts (-1: only the machine)."""
    for k in range(len(strides) - 1, -1, -1):
        if a // strides[k] == b // strides[k]:
            return k
    return -1


def isomorphic(blocks: Sequence[Sequence[int]], strides: Sequence[int], kinds: Sequence[int]) -> bool:
    """Whether every block matches block 0 position by position: same kind, and every pair of
    positions sharing the same innermost level."""
    first = blocks[0]
    shape = [[pair_level(strides, a, b) for b in first[j + 1 :]] for j, a in enumerate(first)]
    for other in blocks[1:]:
        if len(other) != len(first) or any(kinds[a] != kinds[b] for a, b in zip(first, other)):
            return False
        for j, a in enumerate(other):
            if any(pair_level(strides, a, b) != want for b, want in zip(other[j + 1 :], shape[j])):
                return False
    return True


def block_caps(
    blocks: Sequence[Sequence[int]], strides: Sequence[int], caps: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int], ...] | None:
    """Each cap divided by the most blocks meeting in one domain of its level; None when some cap
    leaves a block nothing."""
    out = []
    for level, cap in caps:
        meeting: dict[int, set[int]] = {}
        for i, block in enumerate(blocks):
            for c in block:
                meeting.setdefault(0 if level < 0 else c // strides[level], set()).add(i)
        share = cap // max(len(s) for s in meeting.values())
        if share < 1:
            return None
        out.append((level, share))
    return tuple(out)


def _deal(kinds_of_units: Sequence[list[list[int]]], count: int) -> tuple[int, list[list[int]]]:
    """Each list of units dealt out in consecutive chunks, one per block; block ``i`` holds the
    ``i``-th chunk of every list, in the lists' order.  (units per block, blocks)."""
    blocks: list[list[int]] = [[] for _ in range(count)]
    total = 0
    for units in kinds_of_units:
        per = len(units) // count
        total += per
        for i in range(count if per else 0):
            blocks[i] += [c for unit in units[i * per : (i + 1) * per] for c in unit]
    return total, blocks


def _splits(usable: Sequence[int], strides: Sequence[int], kinds: Sequence[int], count: int, level: int):
    """The candidate splits at `level`: (units per block, blocks) dealing out all units in
    topology order, the units of every shape side by side, and the units of each shape alone."""
    units: dict[int, list[int]] = {}
    for c in usable:
        units.setdefault(c // strides[level], []).append(c)
    shapes: dict[tuple, list[list[int]]] = {}
    for domain, members in units.items():
        start = domain * strides[level]
        shapes.setdefault(tuple((c - start, kinds[c]) for c in members), []).append(members)
    choices = [[list(units.values())]]
    if len(shapes) > 1:
        choices += [list(shapes.values())] + [[members] for members in shapes.values()]
    for chosen in choices:
        per, blocks = _deal(chosen, count)
        if per:
            yield per, blocks


def find_blocks(
    usable: Sequence[int],
    strides: Sequence[int],
    kinds: Sequence[int],
    count: int,
    caps: Sequence[tuple[int, int]] = (),
    *,
    app: str = "",
) -> Blocks:
    """`count` isomorphic blocks of the `usable` contexts (module docstring); raises
    `NoBlocks` when there are none."""
    usable = sorted(usable)
    if count > len(usable):
        raise NoBlocks(
            f"{count} instances of `{app}` need a context each at least: the spec has {len(usable)} usable "
            f"context{'s' if len(usable) != 1 else ''} (lower the workload's instances or free contexts)"
        )
    best: Blocks | None = None
    for level in range(len(strides)):
        for per, blocks in _splits(usable, strides, kinds, count, level):
            if not isomorphic(blocks, strides, kinds):
                continue
            shares = block_caps(blocks, strides, caps)
            if shares is None:
                continue
            if best is None or count * len(blocks[0]) > best.covered:
                placed = {c for block in blocks for c in block}
                unused = tuple(c for c in usable if c not in placed)
                best = Blocks(tuple(tuple(b) for b in blocks), level, per, unused, shares)
    if best is None:
        raise NoBlocks(
            f"{count} instances of `{app}` cannot each get a block of contexts: no split of the {len(usable)} "
            "usable contexts into blocks of the same shape (kinds of core, shared levels) leaves every block "
            "a thread under constraints.max_threads"
        )
    return best


def instance_blocks(spec, app: str, caps: Sequence[tuple[int, int]], instance: int = 0) -> dict:
    """The block fields of `solver.pipeline.problem.PipelineProblem` for the workload's instances
    of `app` (none with one instance): block 0 is `instance`'s, the others go to the other
    instances in order; the caps of one block under ``"caps"``."""
    count = spec.instance_count(app)
    if count <= 1:
        return {}
    topo = spec.topology
    found = find_blocks(spec.usable_contexts, topo.strides, topo.context_kinds, count, caps, app=app)
    others = [i for i in range(count) if i != instance]
    return {
        "block": found.blocks[0],
        "copies": tuple(zip(others, found.blocks[1:])),
        "unused": found.unused,
        "block_level": found.level,
        "caps": found.caps,
    }
