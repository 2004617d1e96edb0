"""The relaxation's charges of the pipeline CP-SAT model (`solver.pipeline.model`, "The
relaxation"; the bound it gives: `solver.pipeline.bound`): functions of the model's builder
(`model._Builder`: its model ``m``, ``bins``, ``same``, ``occT``, ``T``, ``E``, ``Q``,
``Smax``, ``horizon`` and ``pairs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ortools.sat.python import cp_model

if TYPE_CHECKING:
    from tasksolve.solver.pipeline.model import _Builder
    from tasksolve.solver.pipeline.problem import PipelineEdge


def relaxed_costs(b: _Builder, i: int, e: PipelineEdge) -> tuple[cp_model.IntVar, cp_model.IntVar]:
    """The relaxation's two charges of edge i (module docstring): the closest replica pair's
    cost (``touch[e,k] =>`` some domain of level k holds both groups) and the cost every
    consumer replica pays at least (``all[e,k] =>`` every domain of level k holding a consumer
    replica holds a producer replica)."""
    m, bins, same = b.m, b.bins, b.same
    out = []
    for name in ("touch", "all"):
        cost = m.new_int_var(0, e.worst, f"{name}cost[{i}]")
        expr, previous = e.at(-1), -1
        for k in bins.comm if len({e.at(k) for k in [-1] + bins.comm}) > 1 else ():
            near = m.new_bool_var(f"{name}[{i},{k}]")
            domains = range(max(bins.domain[k]) + 1)
            if name == "touch":
                both = [m.new_bool_var(f"both[{i},{k},{D}]") for D in domains]
                for D, w in zip(domains, both):
                    m.add_implication(w, b.occT[e.source, k, D])
                    m.add_implication(w, b.occT[e.target, k, D])
                m.add_bool_or(both).only_enforce_if(near)
            else:
                for D in domains:
                    m.add_bool_or([~b.occT[e.target, k, D], b.occT[e.source, k, D]]).only_enforce_if(near)
            expr = expr + near * (e.at(k) - e.at(previous))
            previous = k
        m.add(cost == expr).only_enforce_if(~same[i])
        m.add(cost == 0).only_enforce_if(same[i])
        out.append(cost)
    return out[0], out[1]


def slowest_replica(b: _Builder) -> None:
    """Relaxed only: ``E_g >= Q (T_g - touch_e + all_e)`` for each incoming edge e -- the
    replica that pays e's `all` charge pays at least the closest pair's on every other edge,
    and a slowdown of at least 1 (module docstring); E_g becomes a variable at least these and
    ``T_g S_g``."""
    m, top = b.m, b.horizon * b.Smax
    floors = []
    for g, e_g in enumerate(b.E):
        f_g = m.new_int_var(0, top, f"Ef[{g}]")
        m.add(f_g >= e_g)
        for touch, every in b.pairs[g]:
            m.add(f_g >= b.Q * (b.T[g] - touch + every))
        floors.append(f_g)
    b.E = floors
