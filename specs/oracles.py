"""The oracle kinds a spec may name: ``des``, ``analytic``, ``command``, each with a one-line
description and where its factory is (``"module:attribute"`` in `simulate`, imported by
`simulate.registry` only when an oracle is made).

The table is spec vocabulary, so it lives here: the spec's ``oracle.kind`` validation, the JSON
Schema and the CLI read the names from it without `specs` importing `simulate`.  A new oracle is a
module in `simulate/` whose factory takes ``(spec, **overrides)`` and returns an object with the
`simulate.oracle.Oracle` protocol, plus one line in `ORACLES` (docs/design.md, "Layout").
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class OracleKind:
    """One registered oracle kind."""

    name: str
    description: str
    factory: str  # "module:attribute", called as factory(spec, **overrides)
    noun: str = ""  # what a sentence calls it ("the plan measured on the <noun>"); "" for "<name> oracle"
    exclusive: bool = False  # measures the host itself: measurements must not overlap (one worker)


ORACLES: dict[str, OracleKind] = {
    kind.name: kind
    for kind in (
        OracleKind(
            "des",
            "the SimPy discrete-event simulation of the processor and the applications",
            "tasksolve.simulate.oracle:SimulationOracle",
            "simulation",
        ),
        OracleKind(
            "analytic",
            "the closed-form model (every co-located thread always loads its resources)",
            "tasksolve.simulate.oracle:AnalyticOracle",
            "closed form",
        ),
        OracleKind(
            "command",
            "the user's real program, run pinned on this host once per plan and repeat",
            "tasksolve.simulate.command:CommandOracle",
            "real program",
            exclusive=True,
        ),
    )
}

DEFAULT_KIND = "des"


def suggestion(name: str) -> str:
    found = difflib.get_close_matches(str(name)[:64], list(ORACLES), n=1, cutoff=0.5)
    return f"; did you mean `{found[0]}`?" if found else ""


def unknown_message(name: str) -> str:
    """The one wording of an unknown oracle name, shared by the CLI and the spec loader."""
    return f"unknown oracle `{name}` (one of {', '.join(ORACLES)}){suggestion(name)}"


#: the models a bound may be stated on that are no oracle (docs/design.md, departure 19)
MODEL_NOUNS = {
    "pipeline model": "pipeline CP-SAT model",
    "pipeline closed form": "pipeline closed form",
    "model": "model",  # a bound that names no oracle
}


def noun(name: str) -> str:
    """The one wording of oracle `name` in a sentence ("simulation", "closed form", "real
    program"), or of a bound's model (`MODEL_NOUNS`); another name (a test's oracle) is "<name>
    oracle"."""
    kind = ORACLES.get(name)
    if kind is not None and kind.noun:
        return kind.noun
    return MODEL_NOUNS.get(name, f"{name} oracle")


def exclusive(name: str) -> bool:
    """Whether oracle `name` must measure one plan at a time (unregistered names: no)."""
    kind = ORACLES.get(name)
    return bool(kind and kind.exclusive)


def help_text() -> str:
    """``des (the SimPy ...), analytic (...), command (...)`` for option help texts."""
    return "; ".join(f"{kind.name}: {kind.description}" for kind in ORACLES.values())
