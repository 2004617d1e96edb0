"""The binding problem in numbers: which contexts each thread may take, demands, work, costs.

One thread per task per instance (`specs.Spec.threads`); each thread takes its own usable
context.  This module turns a spec into the plain integer/float tables that the CP-SAT model and
the symmetry breaking share, and says which spec constraint allows or forbids what, so that an
infeasible set can be named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from tasksolve.specs import Spec


@dataclass
class BindingProblem:
    """Tables derived from a spec for the binding problem (threads in `spec.threads` order)."""

    spec: Spec
    ignore: frozenset[str] = field(default_factory=frozenset)  # constraint groups left out
    batch_model: object = field(default=None, repr=False, compare=False)  # a `BatchModel` of `spec` built already

    @cached_property
    def batch(self):
        """The closed form of `spec` (`simulate.analytic.BatchModel`), built once."""
        if self.batch_model is None:
            from tasksolve.simulate.analytic import BatchModel

            self.batch_model = BatchModel(self.spec)
        return self.batch_model

    @cached_property
    def topology(self):
        return self.spec.topology

    @cached_property
    def n_threads(self) -> int:
        return len(self.spec.threads)

    @cached_property
    def usable(self) -> list[int]:
        if "contexts" in self.ignore:  # constraints.contexts left out; the host's own limits stay
            return list(self.topology.usable_contexts)
        return list(self.spec.usable_contexts)

    @cached_property
    def allowed(self) -> list[list[int]]:
        """Contexts each thread may take under constraints.contexts, forbid and pin."""
        topo = self.topology
        cons = self.spec.constraints
        everywhere = sorted(self.usable)  # one list shared by the threads neither pinned nor forbidden
        usable = set(everywhere)
        out = []
        for thread in self.spec.threads:
            name = thread.name
            forbid = cons.forbid.get(name) if f"forbid:{name}" not in self.ignore else None
            pin = cons.pin.get(name) if f"pin:{name}" not in self.ignore else None
            if not forbid and pin is None:
                out.append(everywhere)
                continue
            contexts = set(usable)
            for domain in forbid or []:
                contexts -= set(topo.contexts_of(*topo.parse_domain(domain)))
            if pin is not None:
                contexts &= {topo.parse_context(pin)}
            out.append(sorted(contexts))
        return out

    @cached_property
    def instance_of(self) -> list[int]:
        """Index into `spec.instances` of each thread."""
        index = {inst: i for i, inst in enumerate(self.spec.instances)}
        return [index[(t.app, t.instance)] for t in self.spec.threads]

    @cached_property
    def instance_threads(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.spec.instances]
        for t, i in enumerate(self.instance_of):
            out[i].append(t)
        return out

    @cached_property
    def cycles(self) -> list[float]:
        apps = self.spec.applications
        return [apps[t.app].tasks[t.task].work for t in self.spec.threads]

    @cached_property
    def kind_cycles(self) -> list[tuple[float, ...]]:
        """Each thread's cycles on each kind of core (`specs.cpu_kinds`; one column without kinds)."""
        from tasksolve.specs.kind_work import kind_work

        apps, topo = self.spec.applications, self.topology
        return [kind_work(apps[t.app].tasks[t.task], topo.kind_names, topo) for t in self.spec.threads]

    @cached_property
    def demands(self) -> list[dict[str, float]]:
        """Resources each thread loads (demand > 0), with the demand."""
        apps = self.spec.applications
        return [{r: d for r, d in apps[t.app].tasks[t.task].demand.items() if d > 0} for t in self.spec.threads]

    @cached_property
    def edges(self) -> list[tuple[int, int, int, float]]:
        """(producer thread, consumer thread, bytes, weight) for every edge of every instance: the
        weight is the share of the consumer's packets whose message comes from that producer (1
        without replicas; `simulate.model.weighted_messages`)."""
        from tasksolve.simulate.messages import weighted_messages
        from tasksolve.simulate.model import binding_structure

        return weighted_messages(binding_structure(self.spec))

    @cached_property
    def device_tables(self) -> dict[int, object]:
        """Thread -> the cycles its task pays per packet to reach its device from each context
        (`specs.devices.device_table`), for the threads whose task has one."""
        from tasksolve.specs.devices import device_table

        apps, topo = self.spec.applications, self.topology
        uses = [apps[t.app].tasks[t.task].device for t in self.spec.threads]
        tables = {(u.name, u.bytes): device_table(topo, u) for u in uses if u is not None}  # one per use
        return {t: tables[(u.name, u.bytes)] for t, u in enumerate(uses) if u is not None}

    @cached_property
    def share(self) -> list[float]:
        """Each thread's share of its instance's packets: ``1 / replicas`` of its task."""
        return [1.0 / t.replicas for t in self.spec.threads]

    @cached_property
    def replica_lcm(self) -> int:
        """The least common multiple of the replica counts (1 without replicas)."""
        return math.lcm(*(t.replicas for t in self.spec.threads))

    @cached_property
    def predecessors(self) -> list[list[int]]:
        preds: list[list[int]] = [[] for _ in range(self.n_threads)]
        for p, t, _, _ in self.edges:
            preds[t].append(p)
        return preds

    def edge_cost(self, shared_level: int, size: int) -> float:
        return self.topology.message_cycles(shared_level, size)

    @cached_property
    def caps(self) -> dict[int, int]:
        """Level index -> max threads per domain (constraints.max_threads)."""
        if "max_threads" in self.ignore:
            return {}
        topo = self.topology
        return {topo.level_index(name): cap for name, cap in self.spec.constraints.max_threads.items()}

    @property
    def latency_bound_cycles(self) -> float | None:
        if "latency_max" in self.ignore:
            return None
        bound = self.spec.constraints.latency_max
        return None if bound is None else bound.to_cycles(self.topology.clock)

    def constraint_groups(self) -> list[str]:
        """The named spec constraints that can conflict (for infeasibility explanations)."""
        cons = self.spec.constraints
        groups = []
        if cons.contexts is not None:
            groups.append("contexts")
        groups += [f"pin:{t}" for t in cons.pin]
        groups += [f"forbid:{t}" for t in cons.forbid]
        if cons.max_threads:
            groups.append("max_threads")
        if cons.latency_max is not None:
            groups.append("latency_max")
        return groups


def describe_group(spec: Spec, group: str) -> str:
    """A constraint group as the user wrote it: ``constraints.pin."ipfwd#0.R" = core0...``."""
    cons = spec.constraints
    kind, _, thread = group.partition(":")
    if kind == "contexts":
        return f"constraints.contexts = {cons.contexts}"
    if kind == "pin":
        return f"constraints.pin.{thread} = {cons.pin[thread]}"
    if kind == "forbid":
        return f"constraints.forbid.{thread} = {cons.forbid[thread]}"
    if kind == "max_threads":
        return f"constraints.max_threads = {dict(cons.max_threads)}"
    if kind == "latency_max":
        return f"constraints.latency_max = {cons.latency_max}"
    return group
