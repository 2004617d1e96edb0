"""Iterated local search on the closed form: the heuristic plan that hints CP-SAT.

Lourenco, Martin & Stuetzle, "Iterated local search" (Handbook of Metaheuristics, 2003):

* **descent** -- ascent over the *move* neighbourhood: one thread goes to another context it may
  use, swapping with the thread already there (if that thread may use the freed context).  A step
  evaluates the neighbours (`simulate.analytic.BatchModel`) in batches of `STEP_BATCH`, in a random
  order, and takes the best improving neighbour of the first batch that has one: steepest ascent
  wherever the neighbourhood fits one batch (every example up to 24 threads), a best-of-batch
  ascent on servers, where a steepest step over 20,000 neighbours of 192 threads cost 0.45 s and
  a climb from a random start 40 s (the first batches of a random start almost always improve);
  a plan is a local optimum when no batch improves on it;
* **perturbation** -- a few random moves applied to the current plan, then descent again; the
  new local optimum becomes current unless it is worse than the current one by more than a small
  slack (an acceptance that lets the search drift across plateaus), and the best plan met is kept.

Constraints hold in every plan visited: usable contexts, pins and forbids by construction (moves
go only to allowed contexts), ``max_threads`` caps and ``latency_max`` by dropping the
neighbours that break them.  The search is seeded; with ``time_limit=None`` it stops after
``rounds`` perturbations or ``patience`` fruitless ones, so the same seed gives the same plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.samplers import PlacementConstraints

MAX_NEIGHBOURS = 20_000  # larger neighbourhoods are sampled
MAX_PAIRS = 1_000_000  # more (thread, context) pairs: the moves are drawn before they are checked
MAX_NEIGHBOUR_ENTRIES = 8_000_000  # neighbours x threads of one step (64 MB; 4,000 neighbours at 2000 threads)
MAX_ENTRIES = 2_000_000  # plans x threads evaluated at once by the batch closed form
STEP_BATCH = 2048  # neighbours one ascent step evaluates before taking the best improving one


@dataclass
class LocalSearchResult:
    contexts: list[int]
    value: float  # the objective's value (`BatchResult.values`: larger is better)
    rounds: int  # perturbation rounds run
    evaluations: int  # plans evaluated
    wall_time: float = 0.0


class LocalSearch:
    """Descent and perturbation for one spec and objective."""

    def __init__(self, spec, objective: str | None = None, seed: int = 0, model: BatchModel | None = None) -> None:
        self.spec = spec
        self.objective = objective or spec.objective
        self.model = model or BatchModel(spec)
        self.constraints = PlacementConstraints(spec)
        self.rng = np.random.default_rng(seed)
        self.n_threads = len(spec.threads)
        self.n_contexts = spec.topology.n_contexts
        allowed = self.constraints.allowed
        if self.constraints.pinned:
            allowed = allowed.copy()
            for t, c in self.constraints.pinned.items():
                allowed[t] = False
                allowed[t, c] = True
        self.allowed = allowed
        self.n_pairs = int(np.count_nonzero(allowed))
        # every (thread, context) a move may take, unless there are too many to list: then drawn
        self.pairs = np.nonzero(allowed) if self.n_pairs <= MAX_PAIRS else None
        bound = spec.constraints.latency_max
        self.latency_bound = None if bound is None else bound.to_seconds(spec.topology.clock) * (1 + 1e-9)
        self.evaluations = 0

    # ------------------------------------------------------------------ evaluation
    def values(self, plans: np.ndarray, deadline: float | None = None) -> np.ndarray:
        """Objective values, -inf where a cap or the latency bound is broken (evaluated in chunks
        of at most `MAX_ENTRIES` plan entries, so that memory stays bounded on large machines);
        once the `deadline` (perf_counter) passes, the chunks not yet evaluated are -inf (the
        first chunk is always evaluated)."""
        step = max(1, MAX_ENTRIES // max(1, plans.shape[1]))
        if len(plans) > step:
            out = np.full(len(plans), -np.inf)
            for i in range(0, len(plans), step):
                if i and deadline is not None and time.perf_counter() >= deadline:
                    break
                out[i : i + step] = self.values(plans[i : i + step])
            return out
        self.evaluations += len(plans)
        result = self.model.evaluate(plans)
        values = result.values(self.objective).astype(float)
        ok = self.constraints.valid(plans)
        if self.latency_bound is not None:
            ok &= result.latency_max <= self.latency_bound
        values[~ok] = -np.inf
        return values

    # ------------------------------------------------------------------ neighbourhood
    def neighbours(self, plan: np.ndarray) -> np.ndarray:
        """Every plan one move away (sampled down to `MAX_NEIGHBOURS`, and to `MAX_NEIGHBOUR_ENTRIES`
        plan entries, so that one descent step stays short and small on large machines)."""
        return self._apply(plan, self._moves(plan))

    def _moves(self, plan: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The moves of `neighbours` as (thread, context, displaced thread, swap) arrays, one
        entry per neighbour: a few bytes each where the neighbour itself is a whole plan."""
        occupant = np.full(self.n_contexts, -1)
        occupant[plan] = np.arange(self.n_threads)
        if self.pairs is None:  # draw the moves before checking them: uniform over the allowed pairs
            threads, contexts = self._draw_pairs(self._most())
        else:
            threads, contexts = self.pairs
        keep = contexts != plan[threads]
        threads, contexts = threads[keep], contexts[keep]
        others = occupant[contexts]
        swap = others >= 0
        # the displaced thread must be allowed on the freed context
        ok = ~swap | self.allowed[np.where(swap, others, 0), plan[threads]]
        threads, contexts, others, swap = threads[ok], contexts[ok], others[ok], swap[ok]
        if len(threads) > self._most():
            pick = np.sort(self.rng.choice(len(threads), self._most(), replace=False))
            threads, contexts, others, swap = threads[pick], contexts[pick], others[pick], swap[pick]
        return threads, contexts, others, swap

    def _apply(self, plan: np.ndarray, moves: tuple, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The neighbours of `plan` that `moves` (`_moves`) make, those of `rows` only, in their order."""
        threads, contexts, others, swap = (m[rows] for m in moves)
        out = np.repeat(plan[None, :], len(threads), axis=0)
        rows = np.arange(len(threads))
        out[rows[swap], others[swap]] = plan[threads[swap]]
        out[rows, threads] = contexts
        return out

    def _draw_pairs(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """About `n` (thread, context) pairs drawn uniformly among the allowed ones (uniform
        pairs, the disallowed dropped: more than `MAX_PAIRS` are allowed, so most of them)."""
        density = self.n_pairs / self.allowed.size
        draws = int(n / density * 1.1) + 16
        threads = self.rng.integers(0, self.n_threads, draws)
        contexts = self.rng.integers(0, self.n_contexts, draws)
        keep = self.allowed[threads, contexts]
        order = np.lexsort((contexts[keep], threads[keep]))[:n]
        return threads[keep][order], contexts[keep][order]

    def _most(self) -> int:
        """The neighbours one step evaluates at most."""
        return min(MAX_NEIGHBOURS, max(1, MAX_NEIGHBOUR_ENTRIES // self.n_threads))

    def step(self, plan: np.ndarray, value: float, deadline: float | None = None) -> tuple[np.ndarray, float] | None:
        """One ascent step (see the module docstring): the best neighbour improving on `value`
        (relative 1e-12) in the first batch of `STEP_BATCH` neighbours, in a random order, that
        holds one; None at a local optimum, or once the `deadline` (perf_counter) passes."""
        moves = self._moves(plan)  # the neighbours are built one batch at a time, never all at once
        n = len(moves[0])
        order = self.rng.permutation(n) if n > STEP_BATCH else np.arange(n)
        for i in range(0, n, STEP_BATCH):
            if i and deadline is not None and time.perf_counter() >= deadline:
                return None
            batch = self._apply(plan, moves, order[i : i + STEP_BATCH])
            values = self.values(batch, deadline)
            best = int(np.argmax(values))
            if values[best] > value + 1e-12 * abs(value):
                return batch[best].copy(), float(values[best])  # a copy: a view would keep the batch
        return None

    def descend(self, plan: np.ndarray, value: float, deadline: float | None = None) -> tuple[np.ndarray, float]:
        """Ascent steps (`step`) until none improves or the `deadline` (perf_counter) passes."""
        while deadline is None or time.perf_counter() < deadline:
            found = self.step(plan, value, deadline)
            if found is None:
                return plan, value
            plan, value = found
        return plan, value

    def best_neighbours(self, plan: np.ndarray, k: int) -> list[np.ndarray]:
        """The `k` neighbours of `plan` (`neighbours`) of the highest finite values, best first
        (ties in neighbour order), built one batch of `STEP_BATCH` at a time to be valued."""
        moves = self._moves(plan)
        n = len(moves[0])
        if n == 0:
            return []
        values = np.concatenate(
            [
                self.values(self._apply(plan, moves, np.arange(i, min(i + STEP_BATCH, n))))
                for i in range(0, n, STEP_BATCH)
            ]
        )
        order = [int(j) for j in np.argsort(-values, kind="stable")[:k] if np.isfinite(values[j])]
        return list(self._apply(plan, moves, order)) if order else []

    def perturb(self, plan: np.ndarray, moves: int) -> np.ndarray:
        for _ in range(moves):
            found = self._moves(plan)
            if len(found[0]) == 0:
                break
            plan = self._apply(plan, found, [self.rng.integers(len(found[0]))])[0]
        return plan

    # ------------------------------------------------------------------ search
    def run(
        self,
        start: list[int],
        rounds: int = 200,
        time_limit: float | None = None,
        strength: tuple[int, int] = (2, 6),
        slack: float = 0.002,
        patience: int | None = 60,
    ) -> LocalSearchResult:
        """Descend from `start` (a valid plan), then up to `rounds` perturb-and-descend rounds:
        fewer if `time_limit` seconds pass first or `patience` rounds in a row find nothing
        better.  Each round perturbs the current plan by `strength` random moves; the plan it
        descends to becomes current if it is within `slack` (relative to the best) of the
        current one, so the search can cross plateaus and shallow valleys."""
        begin = time.perf_counter()
        plan = np.asarray(start, dtype=np.intp)
        value = float(self.values(plan[None, :])[0])
        if not np.isfinite(value):
            raise ValueError("the start plan breaks a cap or the latency bound")
        deadline = None if time_limit is None else begin + time_limit
        best_plan, best = self.descend(plan, value, deadline)
        current_plan, current = best_plan, best
        done = since_best = 0
        for done in range(1, rounds + 1):
            if patience is not None and since_best >= patience:
                done -= 1
                break
            if time_limit is not None and time.perf_counter() - begin >= time_limit:
                done -= 1
                break
            moves = int(self.rng.integers(strength[0], strength[1] + 1))
            candidate = self.perturb(current_plan, moves)
            candidate_value = float(self.values(candidate[None, :])[0])
            if not np.isfinite(candidate_value):
                continue
            candidate, candidate_value = self.descend(candidate, candidate_value, deadline)
            since_best += 1
            if candidate_value > best + 1e-12 * abs(best):
                best_plan, best, since_best = candidate, candidate_value, 0
            if candidate_value >= current - slack * abs(best):
                current_plan, current = candidate, candidate_value
        return LocalSearchResult(list(map(int, best_plan)), best, done, self.evaluations, time.perf_counter() - begin)


def improve_plan(
    spec,
    start: list[int],
    *,
    objective: str | None = None,
    seed: int = 0,
    rounds: int = 200,
    time_limit: float | None = None,
    model: BatchModel | None = None,
) -> LocalSearchResult:
    """The best plan iterated local search finds from `start` (see the module docstring); `model`
    the closed form of `spec` where the caller has it built."""
    return LocalSearch(spec, objective, seed, model).run(start, rounds=rounds, time_limit=time_limit)
