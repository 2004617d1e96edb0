"""The registry of oracle kinds: from a name (`specs.oracles`, where the names, descriptions and
factory paths live) to the oracle object.

`simulate.oracle.make_oracle` and the CLI read `KINDS` from here; `factory` imports an oracle's
module only when the oracle is made.  A factory may offer ``identity(spec) -> dict``: the
settings that change its figures, which a samples file's header records so that ``--resume``
refuses a file measured otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from tasksolve.simulate.errors import OracleError, SimulateError
from tasksolve.specs.oracles import (
    DEFAULT_KIND,
    ORACLES,
    OracleKind,
    exclusive,
    help_text,
    suggestion,
    unknown_message,
)

__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "ORACLES",
    "OracleKind",
    "OracleUnavailableError",
    "UnknownOracleError",
    "exclusive",
    "factory",
    "help_text",
    "lookup",
    "suggestion",
    "unknown_message",
]

KINDS: tuple[str, ...] = tuple(ORACLES)


class UnknownOracleError(SimulateError, ValueError):
    """An oracle name that is not registered (bad input, exit 2)."""


class OracleUnavailableError(OracleError):
    """A registered oracle that cannot run here (its module or a setting it needs is missing)."""


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
