"""``tasksolve topology probe``: measure the host a topology describes (docs/design.md, "Real machines").

* `simulate.probe.helper` builds the compiled helper (``pingpong.c``, shipped as package data)
  with the system C compiler on first use, into a user cache folder; where none exists the probe
  falls back to `simulate.probe.fallback` (Python processes: microseconds, not nanoseconds);
* `simulate.probe.measure` measures every pair of CPUs -- one-way cache-line latency and the
  compute-loop interference -- in repetitions, pairs shuffled in each (interleaved);
* `simulate.probe.analysis` is a pure function of those matrices: latency classes, hidden
  sharing, unstable pairs, and the communication cost of each level of the topology;
* `simulate.probe.report` reads/writes the matrices as CSV, renders the findings and writes the
  costs into a topology file.
"""
