"""`build_topology` is linear in the PUs (O(n log n)), and its group-bys agree with the nested
scans they replaced (docs/design.md, "Real machines"; bench/host_import_speed.py measures it)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tasksolve.specs import SpecError
from tasksolve.specs.importers.host import Cache, HostDescription, build_topology
from tasksolve.specs.importers.tree import _cache_groups, layout, levels_of, uniform_counts

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from host_import_speed import synthetic_host


def test_32k_pus_build_in_seconds():
    """2 x 8192 x 2 = 32,768 PUs: the nested scans took minutes (16k PUs: 17 s); the group-bys a
    second or two. The bound leaves a wide margin for a loaded machine."""
    host = synthetic_host(32768)  # the benchmark's host: 2 sockets x 8192 cores x 2 SMT
    start = time.process_time()
    result = build_topology(host)
    spent = time.process_time() - start
    topo = result.topology
    assert topo.level_names == ["socket", "core", "pu"] and topo.counts == [2, 8192, 2]
    assert topo.os_cpus["socket1.core8191.pu1"] == 32767 and topo.os_cpus["socket0.core0.pu1"] == 16384
    assert spent < 30, f"{spent:.1f} s of processor time for 32,768 PUs"


# ------------------------------------------------------------ the scans the group-bys replaced
def _naive_cache_groups(host: HostDescription, level: int) -> dict[int, frozenset[int]]:
    cpus = host.cpus
    sets = {c.cpus & set(cpus) for c in host.caches if c.level == level and c.kind != "instruction"}
    return {c: min((s for s in sets if c in s), key=sorted) for c in cpus if any(c in s for s in sets)}


def _naive_layout(levels, cpus):
    counts, outer, position = [], [frozenset(cpus)], []
    for _, partition in levels:
        children = [sorted((g for g in partition if g <= o), key=min) for o in outer]
        counts.append(max(len(c) for c in children))
        position.append({cpu: i for kids in children for i, group in enumerate(kids) for cpu in group})
        outer = partition
    strides = [math.prod(counts[k + 1 :]) for k in range(len(counts))]
    return counts, {cpu: sum(position[k][cpu] * strides[k] for k in range(len(counts))) for cpu in cpus}


def _naive_per_outer(host, levels):
    found, outer = [], [frozenset(host.cpus)]
    for _, partition in levels:
        found.append([sum(1 for g in partition if g <= o) for o in outer])
        outer = partition
    return found


@given(st.data())
def test_group_bys_agree_with_the_nested_scans(data):
    """Random nested groupings (packages, cores, overlapping caches): the same cache groups, the
    same children per domain, the same layout as the quadratic scans."""
    cpus = data.draw(st.lists(st.integers(0, 60), min_size=1, max_size=24, unique=True))
    package = {c: data.draw(st.integers(0, 2)) for c in cpus}
    core = {c: (package[c], data.draw(st.integers(0, 3))) for c in cpus}
    cores = {c: frozenset(d for d in cpus if core[d] == core[c]) for c in cpus}
    pick = st.sampled_from(cpus)
    caches = {
        Cache(data.draw(st.integers(2, 3)), "unified", None, frozenset(data.draw(st.lists(pick, min_size=1))))
        for _ in range(data.draw(st.integers(0, 5)))
    }
    host = HostDescription(source="<random>", package=package, siblings=cores, caches=caches)
    for level in (2, 3):
        assert _cache_groups(host, level) == _naive_cache_groups(host, level)
    try:
        levels = levels_of(host)
    except SpecError:  # groups that do not nest: refused before any count
        return
    assert layout(levels, host.cpus) == _naive_layout(levels, host.cpus)
    per_outer = _naive_per_outer(host, levels)
    if all(len(set(counts)) == 1 for counts in per_outer):
        assert uniform_counts(host, levels) == [counts[0] for counts in per_outer]
