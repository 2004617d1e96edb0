"""Which domain of a level a thread runs in, as the CP-SAT binding model holds it
(`solver.binding.model`: the loads ``L[r, D_r(t)]`` a thread's slowdown reads and the ``same_k``
literals of the communication costs).

For each thread and level, by what its allowed contexts allow:

* a constant, where they all lie in one domain of the level;
* *membership literals*, one per domain D holding one of them: ``in[t,k,D] = sum_{c in D} x[t,c]``
  (the placement literal itself where D holds only one of its contexts), on a level with at most
  `MEMBERSHIP_MAX_DOMAINS` domains in use.  Then a thread's slowdown is bounded by the load of
  each domain under that domain's literal (``cap S_t >= Q L[r,D]`` if ``in[t,k,D]``), and
  ``same_k`` of a producer p and a consumer q is two clauses per domain:
  ``same -> (in[p,k,D] -> in[q,k,D])`` and ``in[p,k,D] and in[q,k,D] -> same``;
* otherwise an integer variable, the domain's number tied to the placement literals, read by an
  element constraint for the loads and a reified equality for ``same_k`` (the earlier encoding,
  kept where a level has many domains: there the membership literals, threads x domains of them,
  grow the model and CP-SAT's memory -- on bench/scale_binding.py's 256-context server, by
  enough to take the job past its 2 GB goal (BENCHMARKS, "domain-encoding").

Both encodings state the same thing; the literals are the stronger model for CP-SAT, which with
the integer encoding spends its presolve expanding the reified equalities into clauses on the
same literals: alone on the model, CP-SAT proves the optimum in less than half the time (the
median over the hybrid desktop example, its uniform trees and two 24-thread T2 examples:
BENCHMARKS, "domain-encoding", `bench/domain_encoding.py`, A/B by this module's limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ortools.sat.python import cp_model

MEMBERSHIP_MAX_DOMAINS = 32  # above, a level's domain stays an integer variable (module docstring)


@dataclass
class ThreadDomain:
    """Thread t's domain at one level: exactly one of the three forms is set."""

    constant: int | None = None
    member: dict[int, object] | None = None  # domain -> literal "t runs in it"
    number: object | None = None  # integer variable: the domain's number
    values: tuple[int, ...] = ()  # the domains it may take (all three forms)


def thread_domains(model: cp_model.CpModel, topology, x: list[dict[int, object]], bounds: dict) -> list[list]:
    """``[t][level]`` -> `ThreadDomain` for every thread (its placement literals ``x[t]``) and
    level; `bounds` receives each integer variable's (low, high) (the model's registry)."""
    depth = len(topology.levels)
    contexts = set().union(*(row.keys() for row in x))
    in_use = [len({topology.domain_of(c, level) for c in contexts}) for level in range(depth)]
    out = []
    for t, row in enumerate(x):
        per_level = []
        for level in range(depth):
            groups: dict[int, list] = {}
            for c, lit in row.items():
                groups.setdefault(topology.domain_of(c, level), []).append(lit)
            values = tuple(sorted(groups))
            if len(values) == 1:
                per_level.append(ThreadDomain(constant=values[0], values=values))
            elif in_use[level] <= MEMBERSHIP_MAX_DOMAINS:
                member = {d: _membership(model, groups[d], t, level, d) for d in values}
                per_level.append(ThreadDomain(member=member, values=values))
            else:
                var = model.new_int_var_from_domain(cp_model.Domain.from_values(values), f"dom[{t},{level}]")
                bounds[var.index] = (values[0], values[-1])
                model.add(var == sum(d * lit for d, lits in groups.items() for lit in lits))
                per_level.append(ThreadDomain(number=var, values=values))
        out.append(per_level)
    return out


def _membership(model: cp_model.CpModel, lits: list, t: int, level: int, domain: int):
    if len(lits) == 1:
        return lits[0]
    literal = model.new_bool_var(f"in[{t},{level},{domain}]")
    model.add(literal == sum(lits))
    return literal


def same_domain(model: cp_model.CpModel, a: ThreadDomain, b: ThreadDomain, name: str):
    """0, 1 or a literal: "the two threads run in one domain of this level"."""
    if a.constant is not None and b.constant is not None:
        return int(a.constant == b.constant)
    if a.constant is not None or b.constant is not None:
        fixed, other = (a, b) if a.constant is not None else (b, a)
        if other.member is not None:
            return other.member.get(fixed.constant, 0)
        return _reified_equal(model, other.number, fixed.constant, name)
    if a.number is not None:
        return _reified_equal(model, a.number, b.number, name)
    if not set(a.member) & set(b.member):
        return 0
    same = model.new_bool_var(name)
    for domain, lit in a.member.items():
        other = b.member.get(domain)
        if other is None:
            model.add_bool_or([same.negated(), lit.negated()])
        else:
            model.add_bool_or([same.negated(), lit.negated(), other])
            model.add_bool_or([same, lit.negated(), other.negated()])
    return same


def _reified_equal(model: cp_model.CpModel, a, b, name: str):
    same = model.new_bool_var(name)
    model.add(a == b).only_enforce_if(same)
    model.add(a != b).only_enforce_if(same.negated())
    return same


def load_options(
    model: cp_model.CpModel, where: ThreadDomain, table: list, new_int: Callable, upper: Callable, name: str
) -> list[tuple[object, object | None]]:
    """The loads a thread's slowdown must cover, each with the literal under which it applies
    (None: always): the load of its one domain, of each domain under its membership literal, or
    an element constraint's variable.  `table`: each domain's load (a variable or 0) by number."""
    if where.constant is not None:
        return [(table[where.constant], None)]
    if where.member is not None:
        return [(table[domain], lit) for domain, lit in where.member.items()]
    load = new_int(0, max(upper(v) for v in table), name)
    model.add_element(where.number, table, load)
    return [(load, None)]
