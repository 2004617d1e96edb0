"""A plan in the forms programs take their CPU placement in (for `simulate.command`).

Given a plan, every thread gets an OS CPU number (`os_cpus`), and the placement is offered in
each common form at once:

* placeholders inside argv elements (replaced wherever they occur in an element, nothing else of
  the element is touched): ``{cpus}`` the CPUs in thread order, comma-separated (``3,5,7``);
  ``{lcores}`` DPDK EAL's ``--lcores`` syntax, lcore ``i`` on the CPU of thread ``i``
  (``0@3,1@5,2@7``); ``{omp_places}`` OpenMP's ``OMP_PLACES`` syntax (``{3},{5},{7}``);
  ``{cpu:APP#I.TASK}`` the CPU of one thread; ``{plan_file}`` the path of the plan file;
* environment variables: ``TASKSOLVE_CPUS`` (as ``{cpus}``), ``TASKSOLVE_PLAN`` (the plan file),
  ``TASKSOLVE_SEED`` (the measurement's seed) and ``TASKSOLVE_PINNING`` (``plan``: pin as told);
* the plan file: JSON (so YAML too) with the spec's name, the seed, ``"pinning": "plan"``, and per
  thread its name, context name and CPU, in thread order.

**Unpinned** (`Placement.unpinned`: the OS scheduler as the baseline every comparison on the
command oracle includes): ``TASKSOLVE_PINNING=none`` and ``"pinning": "none"`` in the plan file,
whose threads have ``context`` and ``cpu`` null and whose ``cpus`` lists every CPU of the
topology (the set the OS may use); ``{cpus}`` and ``TASKSOLVE_CPUS`` are that list,
``{omp_places}`` one place of all of them, ``{lcores}`` every lcore on all of them
(``0@(0,1,..),1@(0,1,..)``), ``{cpu:NAME}`` is ``-1``.  A program told ``none`` must not pin.

Braces that do not spell one of these placeholders reach the program unchanged.  Thread order
is the plan's (``bindings``), the order `specs.exporters` uses too: the order the program is
expected to create its threads (for sampled plans, ``spec.thread_names``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tasksolve.simulate.errors import InvalidPlanError
from tasksolve.specs.placeholders import PLACEHOLDER


class PlaceholderError(InvalidPlanError):
    """An argv placeholder names a thread the plan does not have (bad input, exit 2)."""


def os_cpus(topology) -> list[int]:
    """The OS CPU number of every context of `topology`, by flat context index.

    The topology's own numbers (``os_cpu_list``, from ``os_cpus``) where it carries them;
    otherwise context ``c`` is OS CPU ``c`` (the depth-first context order; on Linux, the order
    of ``lscpu -p`` when the topology mirrors the machine).  The one place that reads them."""
    numbers = getattr(topology, "os_cpu_list", None)
    if isinstance(numbers, (list, tuple)):
        return [int(n) for n in numbers]
    return list(range(topology.n_contexts))


@dataclass(frozen=True)
class Placement:
    """The threads of one plan, their context names and OS CPUs, in thread order."""

    threads: list[str]
    contexts: list[str | None]
    cpus: list[int | None]
    pinned: bool = True
    allowed: tuple[int, ...] = ()  # unpinned: the CPUs the OS may use

    @classmethod
    def unpinned(cls, spec) -> Placement:
        """The program left to the OS scheduler (module docstring)."""
        threads = list(spec.thread_names)
        return cls(threads, [None] * len(threads), [None] * len(threads), False, tuple(os_cpus(spec.topology)))

    @property
    def label(self) -> str:
        """How outputs name the plan (``unpinned (OS scheduler)`` for the baseline)."""
        if not self.pinned:
            return "unpinned (OS scheduler)"
        return ", ".join(f"{t}@{cpu}" for t, cpu in zip(self.threads, self.cpus))

    @classmethod
    def of(cls, spec, plan) -> Placement:
        topology = spec.topology
        order = list(plan.bindings)
        numbers = os_cpus(topology)
        contexts = [plan.bindings[name] for name in order]
        return cls(order, contexts, [numbers[topology.parse_context(c)] for c in contexts])

    def forms(self, plan_file: str) -> dict[str, str]:
        """The value of every fixed placeholder (``cpus``, ``lcores``, ``omp_places``, ``plan_file``)."""
        if not self.pinned:
            every = ",".join(str(c) for c in self.allowed)
            return {
                "cpus": every,
                "lcores": ",".join(f"{i}@({every})" for i in range(len(self.threads))),
                "omp_places": f"{{{every}}}",
                "plan_file": plan_file,
            }
        return {
            "cpus": ",".join(str(c) for c in self.cpus),
            "lcores": ",".join(f"{i}@{c}" for i, c in enumerate(self.cpus)),
            "omp_places": ",".join(f"{{{c}}}" for c in self.cpus),
            "plan_file": plan_file,
        }

    def argv(self, template: list[str], plan_file: str) -> list[str]:
        """`template` with every placeholder replaced (see the module docstring)."""
        forms = self.forms(plan_file)
        cpu_of = dict(zip(self.threads, self.cpus))

        def replace(match: re.Match) -> str:
            if match.group(2) is None:
                return forms[match.group(1)]
            name = match.group(2)
            if not self.pinned and name in cpu_of:
                return "-1"
            if name not in cpu_of:
                from tasksolve.specs.errors import did_you_mean

                raise PlaceholderError(
                    f"placeholder {match.group(0)} in oracle.command names no thread of the "
                    f"plan{did_you_mean(name, self.threads)}"
                )
            return str(cpu_of[name])

        return [PLACEHOLDER.sub(replace, element) for element in template]

    def environment(self, plan_file: str, seed: int | None) -> dict[str, str]:
        env = {
            "TASKSOLVE_CPUS": self.forms(plan_file)["cpus"],
            "TASKSOLVE_PLAN": plan_file,
            "TASKSOLVE_PINNING": "plan" if self.pinned else "none",
        }
        if seed is not None:
            env["TASKSOLVE_SEED"] = str(int(seed))
        return env

    def document(self, spec_name: str, seed: int | None) -> dict[str, Any]:
        """The plan file's content."""
        return {
            "spec": spec_name,
            "seed": seed,
            "pinning": "plan" if self.pinned else "none",
            "cpus": list(self.cpus) if self.pinned else list(self.allowed),
            "threads": [
                {"thread": t, "context": c, "cpu": cpu} for t, c, cpu in zip(self.threads, self.contexts, self.cpus)
            ],
        }
