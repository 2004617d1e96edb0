"""TSBSched and BlackBox over an array of plans at once (NumPy), the formulas of
`solver.predictors.models` (PPoPP'10 §3.3, IEEE TPDS §3.1.2).

Plans are rows of context indices, shape (plans, threads), as in `simulate.analytic.BatchModel`.
A plan is turned into integer codes, then the tables are read through the codes:

* **stress codes**: a stress key is, per sharing level ``j`` and task type ``k``, the number
  ``n[j, k]`` of co-runners of type ``k`` sharing exactly level ``j`` with the thread.  Its code is
  ``sum n[j, k] w[j, k]`` with mixed-radix weights (``n[j, k] <= slots(j)``), so the code of the
  co-runner key is computed from per-domain type counts (`numpy.bincount`) and the code of the
  sibling key from the pairs of threads of each instance; different keys have different codes;
* **form codes**: an instance's placement class is fixed by the innermost shared level of every
  pair of its threads (the machine tree is uniform), coded in base ``depth + 1``.

The stress codes are read through one `solver.predictors.codetable.CodeTable` keyed by ``code * K
+ type`` (a dense array for small code spaces, a hash table otherwise).  Codes missing from the
tables are decoded to stress keys / placements and measured (`ProfileTables.ensure`, one batch
per chunk of plans), so memory holds the tables and one chunk, never every combination.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.predictors.codetable import CodeTable
from tasksolve.solver.predictors.tables import ProfileTables, StressKey

CHUNK = 8192  # plans per vectorised pass (arrays stay in cache)


class BatchPredictor:
    """Vectorised TSBSched / BlackBox for the spec of `tables`."""

    def __init__(self, tables: ProfileTables) -> None:
        self.tables = tables
        spec = tables.spec
        topo = spec.topology
        self.members, instance_of, types = tables.layout()
        self.kinds = tables.task_types
        self.type_of = np.array([self.kinds.index(t) for t in types], dtype=np.intp)
        self.instance_of = np.array(instance_of, dtype=np.intp)
        self.apps = [spec.instances[i][0] for i in range(len(self.members))]
        self.tasks = [t[1] for t in types]
        K = len(self.kinds)
        self.levels = tables.sharing_levels  # innermost first
        bases = [tables.slots(level) + 1 for level in self.levels]
        self.weights = np.zeros((len(self.levels), K), dtype=np.int64)
        w = 1
        for j, b in enumerate(bases):
            for k in range(K):
                self.weights[j, k] = w
                w *= b
        if w >= 2**52 or w * K >= 2**62:  # codes are summed in float64 (exact below 2**53); keys are int64
            raise BadProblemError(
                f"{tables.spec.name}: {K} task types are too many for the stress codes of TSBSched and BlackBox"
            )
        self.bases = bases
        self.depth = len(topo.levels)
        C = topo.n_contexts
        ctx = np.arange(C)
        shared = np.full((C, C), -1, dtype=np.int64)
        for level in range(self.depth):
            same = (ctx[:, None] // topo.strides[level]) == (ctx[None, :] // topo.strides[level])
            shared[same] = level
        self.shared = shared
        # weight of a sibling of type k sharing level l exactly with a thread, indexed [k][l + 1]
        self._pair_weight = np.zeros((K, self.depth + 1), dtype=np.int64)
        for j, level in enumerate(self.levels):
            self._pair_weight[:, level + 1] = self.weights[j]
        self.strides = [topo.strides[level] for level in self.levels]
        self.n_domains = [topo.domain_count(level) for level in self.levels]
        self.code_space = w
        self.table = CodeTable(w * K, 2)
        spaces = [(self.depth + 1) ** comb(len(threads), 2) for threads in self.members]
        if spaces and max(spaces) >= 2**62:  # form codes are int64
            raise BadProblemError(
                f"{tables.spec.name}: an instance of {max(map(len, self.members))} threads has too many placements "
                "for the base-time table of TSBSched and BlackBox"
            )
        self._form_tables = [CodeTable(space, 1 + len(threads)) for space, threads in zip(spaces, self.members)]

    # ------------------------------------------------------------------ codes
    def stress_codes(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(co-runner codes, sibling codes) of every thread, shape (plans, threads) each.

        The code is linear in the counts, so the co-runners sharing exactly level j add up as
        (sum of level-j weights over the thread's level-j domain) minus (the same sum over its
        next inner domain, or the thread itself at the innermost level): two `bincount` per level.
        """
        P, T = contexts.shape
        every = np.zeros((P, T))
        offsets = [(np.arange(P) * n_dom)[:, None] for n_dom in self.n_domains]
        flats = [(contexts // stride + off).ravel() for stride, off in zip(self.strides, offsets)]
        for j in range(len(self.levels)):
            w = self.weights[j, self.type_of].astype(float)
            tiled = np.tile(w, P)
            every += np.bincount(flats[j], weights=tiled)[flats[j]].reshape(P, T)
            if j == 0:
                every -= w[None, :]
            else:
                every -= np.bincount(flats[j - 1], weights=tiled)[flats[j - 1]].reshape(P, T)
        every = np.rint(every).astype(np.int64)
        # siblings: per pair of threads of an instance, the weight of the other's type at the
        # level they share exactly (a lookup by shared level), in the threads x plans layout
        columns = np.ascontiguousarray(contexts.T)
        siblings = np.zeros((T, P), dtype=np.int64)
        for threads in self.members:
            for a, b in combinations(threads, 2):
                level = self.shared[columns[a], columns[b]] + 1
                siblings[a] += self._pair_weight[self.type_of[b]][level]
                siblings[b] += self._pair_weight[self.type_of[a]][level]
        return every, siblings.T

    def form_codes(self, contexts: np.ndarray) -> np.ndarray:
        """Placement class code of every instance, shape (plans, instances)."""
        columns = np.ascontiguousarray(contexts.T)
        out = np.zeros((len(self.members), len(contexts)), dtype=np.int64)
        for i, threads in enumerate(self.members):
            scale = 1
            for a, b in combinations(threads, 2):
                out[i] += (self.shared[columns[a], columns[b]] + 1) * scale
                scale *= self.depth + 1
        return out.T

    def decode(self, kind: int, code: int) -> StressKey:
        key = []
        for j, _ in enumerate(self.levels):
            types = []
            for k in range(len(self.kinds)):
                n = (code // int(self.weights[j, k])) % self.bases[j]
                types.extend([self.kinds[k]] * n)
            key.append(tuple(sorted(types)))
        return tuple(key)

    # ------------------------------------------------------------------ table reads
    def _stress_values(self, codes: np.ndarray, row: int) -> np.ndarray:
        """Row `row` (0: target instance throughput, 1: target thread time) of every thread's
        stress code, shape (plans, threads), read through one `CodeTable` keyed by ``code * K +
        type``.  The codes not in the table yet are decoded, measured (`ProfileTables.ensure`)
        and added."""
        keys = codes * len(self.kinds) + self.type_of[None, :]
        slots = self.table.slots(keys)
        if (slots < 0).any():
            self._measure(np.unique(keys[slots < 0]))
            slots = self.table.slots(keys)
        return self.table.values[row][slots]

    def _measure(self, keys: np.ndarray) -> None:
        """Measure the stress keys of combined codes `keys` and add their figures to the table,
        one batch of experiments per target task type (a batch's jobs are held at once)."""
        K = len(self.kinds)
        for k in np.unique(keys % K).tolist():
            codes = keys[keys % K == k]
            target = self.kinds[k]
            wanted = [self.decode(k, c) for c in (codes // K).tolist()]
            self.tables.ensure((target, key) for key in wanted)
            entries = [self.tables.slowdown[target][key] for key in wanted]
            values = np.array(
                [[e.throughput for e in entries], [e.thread_times.get(target[1], np.nan) for e in entries]]
            )
            self.table.insert(codes, values)

    def _base_values(self, contexts: np.ndarray, forms: np.ndarray):
        """(instance base throughput (P, I), base time of every thread (P, T); NaN where the oracle
        reports no thread times -- only TSBSched reads them, and it is refused on such oracles).
        Read per instance through a `CodeTable` of its form codes (throughput, then its threads'
        times); a form not in it yet is placed from the first plan that has it and read (or
        measured) in the base-time table."""
        base_thr = np.empty(forms.shape)
        base_time = np.empty(contexts.shape)
        for i, threads in enumerate(self.members):
            table = self._form_tables[i]
            slots = table.slots(forms[:, i])
            if (slots < 0).any():
                self.tables.ensure_base(self.apps)
                missing, first = np.unique(forms[slots < 0, i], return_index=True)
                plans = np.nonzero(slots < 0)[0][first]
                entries = [
                    self.tables.base_entry(self.apps[i], self.tables.instance_form(contexts[p].tolist(), threads))
                    for p in plans.tolist()
                ]
                table.insert(
                    missing,
                    np.array(
                        [[e.throughput for e in entries]]
                        + [[e.thread_times.get(self.tasks[t], np.nan) for e in entries] for t in threads]
                    ),
                )
                slots = table.slots(forms[:, i])
            values = table.values[:, slots]
            base_thr[:, i] = values[0]
            base_time[:, threads] = values[1:].T
        return base_thr, base_time

    # ------------------------------------------------------------------ predictions
    def predict(self, method: str, contexts) -> np.ndarray:
        """Predicted throughput of every instance, shape (plans, instances)."""
        contexts = np.atleast_2d(np.asarray(contexts, dtype=np.intp))
        every, siblings = self.stress_codes(contexts)
        forms = self.form_codes(contexts)
        base_thr, base_time = self._base_values(contexts, forms)
        out = np.empty((len(contexts), len(self.members)))
        # performance 2 / exe_time2 with every co-runner; performance 1 / exe_time1 with the
        # thread's siblings only (TPDS Step 2.1-2.3, PPoPP'10 Step 2(i)-(ii))
        if method == "blackbox":
            stressed, alongside = self._stress_values(every, 0), self._stress_values(siblings, 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                slowdown = np.where(stressed > 0, alongside / stressed, np.inf)
            for i, threads in enumerate(self.members):
                out[:, i] = base_thr[:, i] / slowdown[:, threads].max(axis=1)
        elif method == "tsbsched":
            time = base_time + self._stress_values(every, 1) - self._stress_values(siblings, 1)
            for i, threads in enumerate(self.members):
                slowest = time[:, threads].max(axis=1)
                with np.errstate(divide="ignore"):
                    out[:, i] = np.where(slowest > 0, 1.0 / slowest, 0.0)
        else:
            raise ValueError(f"unknown predictor `{method}`")
        return out

    def values(self, method: str, contexts, objective: str = "total_throughput") -> np.ndarray:
        """The number to maximise per plan: total (or, for ``min_throughput``, minimum) predicted
        throughput; other objectives rank by the total."""
        contexts = np.atleast_2d(np.asarray(contexts, dtype=np.intp))
        parts = [self.predict(method, contexts[i : i + CHUNK]) for i in range(0, len(contexts), CHUNK)]
        per_instance = np.concatenate(parts) if parts else np.empty((0, len(self.members)))
        return per_instance.min(axis=1) if objective == "min_throughput" else per_instance.sum(axis=1)
