"""The test bed's program driven in process: the command oracle with its run replaced by the truth
and its noise model (`truth.TestBed`), for the many seeds a statistical study needs.

`InProcessOracle` is `simulate.command.CommandOracle` in every respect -- repeats, warm-up,
interleaving, precision and budget, screening, the noise floor, ``run_once`` and ``unpinned`` --
but one: a run is ``truth.instance_rates(plan)`` times one draw of the bed's `truth.Noise`
(drift over the bed's measurement count), not a process.  `bench/testbed/program.py` is the same
truth run end to end.
"""

from __future__ import annotations

import truth

from tasksolve.simulate.command import CommandOracle


class InProcessOracle(CommandOracle):
    """The command oracle of the test bed's spec, each run drawn from `bed` (module docstring)."""

    def __init__(self, spec, bed: truth.TestBed, **overrides) -> None:
        super().__init__(spec, **overrides)
        self.bed = bed

    def _run_once(self, placement, seed, repeat):
        if placement.contexts and placement.contexts[0] is None:  # unpinned: where the OS puts the threads
            plan = truth.os_plan(self.bed.noise.rng)
        else:
            plan = tuple(int(c) for c in placement.cpus)
        rates = truth.instance_rates(plan)
        factor = self.bed.noise.factor()
        self.bed.measurements += 1
        return sum(rates) * factor, {f"pipe#{i}": r * factor for i, r in enumerate(rates)}
