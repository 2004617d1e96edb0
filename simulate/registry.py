"""The registry of oracle kinds: the one place the names ``des``, ``analytic``, ``command`` live.

An oracle kind is a name, a one-line description, and where its factory is
(``"module:attribute"``, imported only when the oracle is made, so that reading the names costs
nothing and imports nothing of ours).  `simulate.oracle.make_oracle`, the CLI's ``--oracle``
option and the spec's ``oracle.kind`` validation all read `KINDS` from here.  A new oracle is one
module in `simulate/` whose factory takes ``(spec, **overrides)`` and returns an object with the
`simulate.oracle.Oracle` protocol, plus one line in `ORACLES` (docs/design.md, "Layout").  A
factory may offer ``identity(spec) -> dict``: the settings that change its figures, which a
samples file's header records so that ``--resume`` refuses a file measured otherwise.

This module imports nothing of ours at import time (`specs` reads the names from it lazily).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simulate.errors import OracleError, SimulateError


@dataclass(frozen=True)
class OracleKind:
    """One registered oracle kind."""

    name: str
    description: str
    factory: str            # "module:attribute", called as factory(spec, **overrides)
    exclusive: bool = False  # measures the host itself: measurements must not overlap (one worker)


ORACLES: dict[str, OracleKind] = {kind.name: kind for kind in (
    OracleKind("des", "the SimPy discrete-event simulation of the processor and the applications",
               "simulate.oracle:SimulationOracle"),
    OracleKind("analytic", "the closed-form model (every co-located thread always loads its resources)",
               "simulate.oracle:AnalyticOracle"),
    OracleKind("command", "the user's real program, run pinned on this host once per plan and repeat",
               "simulate.command:CommandOracle", exclusive=True),
)}

KINDS: tuple[str, ...] = tuple(ORACLES)
DEFAULT_KIND = "des"


class UnknownOracleError(SimulateError, ValueError):
    """An oracle name that is not registered (bad input, exit 2)."""


class OracleUnavailableError(OracleError):
    """A registered oracle that cannot run here (its module or a setting it needs is missing)."""


def suggestion(name: str) -> str:
    found = difflib.get_close_matches(str(name)[:64], KINDS, n=1, cutoff=0.5)
    return f"; did you mean `{found[0]}`?" if found else ""


def unknown_message(name: str) -> str:
    """The one wording of an unknown oracle name, shared by the CLI and the spec loader."""
    return f"unknown oracle `{name}` (one of {', '.join(KINDS)}){suggestion(name)}"


def lookup(name: str) -> OracleKind:
    """The registered kind `name`; raises `UnknownOracleError` with a did-you-mean."""
    try:
        return ORACLES[name]
    except (KeyError, TypeError):
        raise UnknownOracleError(unknown_message(name)) from None


def factory(name: str) -> Callable[..., Any]:
    """The factory of oracle `name`, imported now; raises `OracleUnavailableError` if it cannot be."""
    kind = lookup(name)
    module, _, attribute = kind.factory.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise OracleUnavailableError(f"the {name} oracle is not available in this installation ({exc})") from None


def exclusive(name: str) -> bool:
    """Whether oracle `name` must measure one plan at a time (unregistered names: no)."""
    kind = ORACLES.get(name)
    return bool(kind and kind.exclusive)


def help_text() -> str:
    """``des (the SimPy ...), analytic (...), command (...)`` for option help texts."""
    return "; ".join(f"{kind.name}: {kind.description}" for kind in ORACLES.values())
