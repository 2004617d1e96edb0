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

Codes missing from the tables are decoded to stress keys / placements and measured
(`ProfileTables.ensure`, one batch per chunk of plans), so memory holds the tables and one chunk,
never every combination.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from solver.predictors.tables import ProfileTables, StressKey


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
        self.levels = tables.sharing_levels                       # innermost first
        bases = [tables.slots(level) + 1 for level in self.levels]
        self.weights = np.zeros((len(self.levels), K), dtype=np.int64)
        w = 1
        for j, b in enumerate(bases):
            for k in range(K):
                self.weights[j, k] = w
                w *= b
        if w >= 2 ** 62:
            raise ValueError("too many task types for the stress codes")
        self.bases = bases
        self.depth = len(topo.levels)
        C = topo.n_contexts
        ctx = np.arange(C)
        shared = np.full((C, C), -1, dtype=np.int64)
        for level in range(self.depth):
            same = (ctx[:, None] // topo.strides[level]) == (ctx[None, :] // topo.strides[level])
            shared[same] = level
        self.shared = shared
        self.strides = [topo.strides[level] for level in self.levels]
        self.n_domains = [topo.domain_count(level) for level in self.levels]
        self._cache: dict[int, dict[int, tuple[float, float]]] = {k: {} for k in range(K)}
        self._forms: dict[tuple[int, int], tuple[float, dict[str, float]]] = {}

    # ------------------------------------------------------------------ codes
    def stress_codes(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(co-runner codes, sibling codes) of every thread, shape (plans, threads) each."""
        P, T = contexts.shape
        every = np.zeros((P, T), dtype=np.int64)
        inner_count = None
        for j, (stride, n_dom) in enumerate(zip(self.strides, self.n_domains)):
            dom = contexts // stride
            flat = (dom + (np.arange(P) * n_dom)[:, None]).ravel()
            counts = []
            for k in range(len(self.kinds)):
                mine = np.broadcast_to(self.type_of == k, (P, T)).ravel().astype(float)
                per_domain = np.bincount(flat, weights=mine, minlength=P * n_dom)
                counts.append(per_domain[flat].reshape(P, T).astype(np.int64))
            for k in range(len(self.kinds)):
                own = inner_count[k] if inner_count is not None else (self.type_of == k)[None, :].astype(np.int64)
                inside = counts[k] - own
                every += inside * self.weights[j, k]
            inner_count = counts
        siblings = np.zeros((P, T), dtype=np.int64)
        level_slot = {level: j for j, level in enumerate(self.levels)}
        for threads in self.members:
            for a, b in combinations(threads, 2):
                level = self.shared[contexts[:, a], contexts[:, b]]
                for lv, j in level_slot.items():
                    hit = level == lv
                    siblings[:, a] += hit * self.weights[j, self.type_of[b]]
                    siblings[:, b] += hit * self.weights[j, self.type_of[a]]
        return every, siblings

    def form_codes(self, contexts: np.ndarray) -> np.ndarray:
        """Placement class code of every instance, shape (plans, instances)."""
        out = np.zeros((len(contexts), len(self.members)), dtype=np.int64)
        for i, threads in enumerate(self.members):
            scale = 1
            for a, b in combinations(threads, 2):
                out[:, i] += (self.shared[contexts[:, a], contexts[:, b]] + 1) * scale
                scale *= self.depth + 1
        return out

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
    def _stress_values(self, codes: np.ndarray, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(target instance throughput, target thread time) for every code, same shape."""
        thr = np.empty(codes.shape)
        tim = np.empty(codes.shape)
        for k in range(len(self.kinds)):
            cols = np.nonzero(kinds == k)[0]
            if len(cols) == 0:
                continue
            sub = codes[:, cols]
            unique, inverse = np.unique(sub, return_inverse=True)
            cache = self._cache[k]
            missing = [int(c) for c in unique if int(c) not in cache]
            if missing:
                target = self.kinds[k]
                keys = {c: self.decode(k, c) for c in missing}
                self.tables.ensure((target, key) for key in keys.values())
                for c, key in keys.items():
                    entry = self.tables.slowdown[target][key]
                    cache[c] = (entry.throughput, entry.thread_times[target[1]])
            values = np.array([cache[int(c)] for c in unique])
            thr[:, cols] = values[:, 0][inverse].reshape(sub.shape)
            tim[:, cols] = values[:, 1][inverse].reshape(sub.shape)
        return thr, tim

    def _base_values(self, contexts: np.ndarray, forms: np.ndarray):
        """(instance base throughput (P, I), base time of every thread (P, T))."""
        P = len(contexts)
        base_thr = np.empty(forms.shape)
        base_time = np.empty(contexts.shape)
        self.tables.ensure_base(self.apps)
        for i, threads in enumerate(self.members):
            unique, first, inverse = np.unique(forms[:, i], return_index=True, return_inverse=True)
            rows = []
            for code, p in zip(unique.tolist(), first.tolist()):
                key = (i, code)
                if key not in self._forms:
                    entry = self.tables.base_entry(self.apps[i], self.tables.instance_form(contexts[p].tolist(), threads))
                    self._forms[key] = (entry.throughput, entry.thread_times)
                rows.append(self._forms[key])
            base_thr[:, i] = np.array([r[0] for r in rows])[inverse.reshape(P)]
            for t in threads:
                base_time[:, t] = np.array([r[1][self.tasks[t]] for r in rows])[inverse.reshape(P)]
        return base_thr, base_time

    # ------------------------------------------------------------------ predictions
    def predict(self, method: str, contexts) -> np.ndarray:
        """Predicted throughput of every instance, shape (plans, instances)."""
        contexts = np.atleast_2d(np.asarray(contexts, dtype=np.intp))
        every, siblings = self.stress_codes(contexts)
        forms = self.form_codes(contexts)
        base_thr, base_time = self._base_values(contexts, forms)
        stressed_thr, stressed_time = self._stress_values(every, self.type_of)
        out = np.empty((len(contexts), len(self.members)))
        if method == "blackbox":
            alone_thr, _ = self._stress_values(np.zeros_like(every[:1]), self.type_of)
            with np.errstate(divide="ignore"):
                slowdown = alone_thr / stressed_thr
            for i, threads in enumerate(self.members):
                out[:, i] = base_thr[:, i] / slowdown[:, threads].max(axis=1)
        elif method == "tsbsched":
            _, sibling_time = self._stress_values(siblings, self.type_of)
            time = base_time + stressed_time - sibling_time
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
        per_instance = self.predict(method, contexts)
        return per_instance.min(axis=1) if objective == "min_throughput" else per_instance.sum(axis=1)
