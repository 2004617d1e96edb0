"""The main job's settings, resolved once from the spec and the caller's options.

`JobSettings.resolve` is the only place where an option left unset (None) takes the spec's value
(``search``, ``oracle``, ``certify`` sections) or the project's default, and where the options are
checked against the problem kind; every later step reads the typed fields. The option names are
the command line's (``tasksolve run --help``), so ``tasksolve.run(spec, out, samples=300)`` and
``tasksolve run SPEC --samples 300`` mean the same.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from tasksolve.solver.certify.designs import DEFAULT_DESIGN, DEFAULT_SAMPLES
from tasksolve.solver.errors import BadProblemError
from tasksolve.specs import Spec

if TYPE_CHECKING:
    from tasksolve.solver.certify.settings import CertifySettings

#: what `tasksolve run` compares on a binding spec unless told otherwise: the methods that finish
#: in about a minute on the 24-thread examples (TSBSched and BlackBox profile first: minutes),
#: and the pinning policies a person would otherwise use (one plan each; `solver.binding.policies`:
#: the answer's gain over the best of them is the terminal's fourth line); ``os`` only where named
#: (on the models it is not measured; on the command oracle the race runs the program unpinned)
BINDING_DEFAULT_METHODS = ("cpsat", "random", "balanced", "compact", "compact-cores", "scatter", "distrib")
#: the most random plans the binding comparison draws (CP-SAT's hint, the random method)
SOLVE_SAMPLES_MAX = 2000
#: the time limit is the job's: the solve gets the rest after `CERTIFY_SHARE`; the certify phase
#: what the solve left, less `REPORT_SHARE` for the report, and at least `CERTIFY_FLOOR_SHARE`
#: (docs/design.md, "The certify phase's time budget")
CERTIFY_SHARE = 1 / 3
REPORT_SHARE = 0.05
CERTIFY_FLOOR_SHARE = 1 / 6


@dataclass(frozen=True)
class JobSettings:
    """Every setting of one main job (or of one ``certify`` of a given plan).

    ``methods`` are the resolved method names of the spec's problem kind; ``samples`` a fixed
    sample size the caller asked for (None: the certifier's rule -- local optima stop once the
    verdict is decided, with the spec's ``certify.samples`` or the design's default as a ceiling,
    `solver.certify.run`); ``target_gap``
    switches to the sequential algorithm (``n_init``, ``n_delta``, ``max_samples``; the spec's
    ``certify.target_gap`` only sets the verdict's target, `solver.certify.run`);
    ``compare_samples`` None lets `solver.certify.compare.resolve` size the other design's
    sample; ``solve_samples`` the random plans of the binding comparison; ``balanced`` the
    balanced plans the certificate measures beside the sample (None: the strategy's default,
    `Strategy.balanced`); ``load`` the offered load of a pipeline's latency."""

    methods: tuple[str, ...]
    time_limit: float
    top_k: int
    seed: int
    workers: int
    oracle_kind: str
    design: str
    samples: int | None
    confidence: float
    n_init: int
    n_delta: int
    max_samples: int
    target_gap: float | None = None
    compare_samples: int | None = None
    solve_samples: int | None = None
    balanced: int | None = None
    load: float | None = None
    deterministic: bool = False
    zone: float = 0.02  # the race's indifference zone on a noisy oracle (`solver.binding.noisy`)
    resume: bool = False
    force: bool = False
    progress: bool = False
    scheduler: Any = None
    certify_budget: float | None = None  # seconds (None: `certify_seconds`' rule; 0: no budget)

    @classmethod
    def resolve(cls, spec: Spec, methods: str | list[str] | tuple[str, ...] | None = None, **options: Any):
        """The settings of a job on `spec`: `methods` as ``all``, a comma-separated string or a
        list (None: the problem's default), `options` by their `JobSettings` field names, None
        meaning the spec's value. Raises `BadProblemError` on an unknown option or method, a
        ``load`` on a binding spec or ``deterministic`` on a pipeline spec."""
        known = {f.name for f in fields(cls)} - {"methods"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise BadProblemError(f"unknown job option(s) {', '.join(unknown)} (one of {', '.join(sorted(known))})")
        given = {k: v for k, v in options.items() if v is not None}
        for option, (problem, message) in _ONE_KIND_ONLY.items():
            if given.get(option) and spec.problem != problem:
                raise BadProblemError(message)
        search, certify = spec.search, spec.certify
        design = given.pop("design", DEFAULT_DESIGN)
        return cls(
            methods=_METHODS[spec.problem](methods),
            time_limit=float(given.pop("time_limit", None) or search.time_limit),
            top_k=int(given.pop("top_k", search.top_k)),
            seed=int(given.pop("seed", search.seed)),
            workers=int(given.pop("workers", None) or search.workers or 1),
            oracle_kind=given.pop("oracle_kind", None) or spec.oracle.kind,
            design=design,
            samples=int(samples) if (samples := given.pop("samples", None)) else None,
            confidence=float(given.pop("confidence", certify.confidence)),
            n_init=int(given.pop("n_init", None) or certify.n_init),
            n_delta=int(given.pop("n_delta", None) or certify.n_delta),
            max_samples=int(given.pop("max_samples", None) or certify.max_samples),
            **given,
        )

    def solve_sample_size(self, spec: Spec) -> int:
        """Random plans the binding comparison draws: ``solve_samples``, else the spec's
        ``certify.samples`` (or the random design's default) up to `SOLVE_SAMPLES_MAX`."""
        return self.solve_samples or min(SOLVE_SAMPLES_MAX, spec.certify.samples or DEFAULT_SAMPLES["random"])

    def _budgeted(self) -> bool:
        """Whether the time limit is the whole job's (not with ``deterministic``, whose certify
        phase has no wall-clock budget, nor with a ``certify_budget`` the caller set)."""
        return self.certify_budget is None and not self.deterministic

    def solve_seconds(self) -> float:
        """The solve's time limit (CP-SAT's steps and the measurement of its plans): the job's
        limit less `CERTIFY_SHARE` of it when the job is budgeted, else the whole limit."""
        return (1.0 - CERTIFY_SHARE) * self.time_limit if self._budgeted() else self.time_limit

    def certify_seconds(self, elapsed: float = 0.0) -> float:
        """The certify phase's time budget (`solver.certify.budget`): ``certify_budget`` when
        given (0: none), none with ``deterministic``, else what is left of the job's time limit
        after `elapsed` seconds (the solve), less `REPORT_SHARE` of it for the report, and at
        least `CERTIFY_FLOOR_SHARE` of it (a solve that overran still leaves the certify phase
        time to measure the plan and decide)."""
        if self.certify_budget is not None:
            return float(self.certify_budget)
        if self.deterministic:  # the same certificate on every run: no wall-clock budget
            return 0.0
        left = (1.0 - REPORT_SHARE) * self.time_limit - elapsed
        return max(CERTIFY_FLOOR_SHARE * self.time_limit, left)

    def recertify_seconds(self, elapsed: float) -> float:
        """The budget of a second certification in the job (the plan it adopted, `solver.job.job.Job`):
        what the job's time limit has left after `elapsed` seconds, less `REPORT_SHARE` of it, and
        no floor (the first certification had it); at least a millisecond (a budget, not none).
        ``certify_budget`` and ``deterministic`` as in `certify_seconds`."""
        if self.certify_budget is not None or self.deterministic:
            return self.certify_seconds(elapsed)
        return max(1e-3, (1.0 - REPORT_SHARE) * self.time_limit - elapsed)

    def certify_settings(self, elapsed: float = 0.0) -> CertifySettings:
        """The settings of `solver.certify.run.certify` these fix (the strategy adds the plan, the
        bounds, the known plans and the sampler, and may set ``balanced`` and ``probes``)."""
        from tasksolve.solver.certify.settings import CertifySettings

        return CertifySettings(
            design=self.design,
            samples=self.samples,
            target_gap=self.target_gap,
            confidence=self.confidence,
            n_init=self.n_init,
            n_delta=self.n_delta,
            max_samples=self.max_samples,
            workers=self.workers,
            seed=self.seed,
            oracle_kind=self.oracle_kind,
            resume=self.resume,
            force=self.force,
            progress=self.progress,
            scheduler=self.scheduler,
            compare_samples=self.compare_samples,
            budget_s=self.certify_seconds(elapsed),
        )


def _names(methods: str | list[str] | tuple[str, ...]) -> list[str]:
    if isinstance(methods, str):
        return [m.strip().lower() for m in methods.split(",") if m.strip()]
    return [str(m).strip().lower() for m in methods]


def _binding_methods(methods) -> tuple[str, ...]:
    """The binding methods to compare, in `METHODS` order; CP-SAT always runs (its plan is the
    answer)."""
    from tasksolve.solver.binding.compare import METHODS
    from tasksolve.specs.errors import did_you_mean

    names = list(BINDING_DEFAULT_METHODS) if methods is None else _names(methods)
    if "all" in names:
        return METHODS
    for name in names:
        if name not in METHODS:
            raise BadProblemError(
                f"unknown method `{name}` (one of {', '.join(METHODS)}, all){did_you_mean(name, METHODS)}"
            )
    return tuple(m for m in METHODS if m == "cpsat" or m in names)


def _pipeline_methods(methods) -> tuple[str, ...]:
    """The pipeline methods (`solver.pipeline.compare`); the default is every one of them."""
    from tasksolve.solver.pipeline.job import parse_methods

    if methods is None or tuple(_names(methods)) == BINDING_DEFAULT_METHODS:
        return tuple(parse_methods("all"))
    return tuple(parse_methods(",".join(_names(methods))))


#: the methods of each problem kind (by the spec's ``problem``)
_METHODS = {"binding": _binding_methods, "pipeline": _pipeline_methods}
#: options that apply to one problem kind only, and the message for the other
_ONE_KIND_ONLY = {
    "load": ("pipeline", "--load applies to pipeline specs (latency at an offered load)"),
    "deterministic": (
        "binding",
        "--deterministic applies to binding specs (CP-SAT's binding solve in deterministic time)",
    ),
}
