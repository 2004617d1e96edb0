"""``tasksolve topology probe``: measure the host a topology describes (docs/design.md, "Real machines").

* `simulate.probe.helper` builds the compiled helper (``pingpong.c``, shipped as package data)
  with the system C compiler on first use, into a user cache folder; where none exists the probe
  falls back to `simulate.probe.fallback` (Python processes: microseconds, not nanoseconds);
* `simulate.probe.measure` measures every pair of CPUs -- one-way cache-line latency and the
  compute-loop interference -- in repetitions, pairs shuffled in each (interleaved);
* `simulate.probe.loading` reads saved matrices strictly: the probe's own CSV and the public
  core-to-core latency matrix (N x N, lower triangle);
* `simulate.probe.analysis` is a pure function of those matrices: latency classes, each level's
  populations, pairs faster (hidden sharing) or slower than their level, unstable pairs, and the
  communication cost of each level of the topology (or of a flat set of CPUs without one);
  `simulate.probe.findings` says it in sentences, with counts and CPU ranges;
* `simulate.probe.kinds` tells kinds of core apart by the compute loop's rate alone (a hybrid's P
  and E cores) and writes them as a topology's ``kinds``;
* `simulate.probe.structure` proposes the sharing domains the latencies show (complete-linkage
  clusters cut between latency populations);
* `simulate.probe.report` writes the matrices as CSV, renders the findings and the proposal,
  writes the costs into a topology file and the proposal as one.
"""
