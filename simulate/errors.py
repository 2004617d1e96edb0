"""The one error base of `simulate` and the errors the oracles raise."""

from __future__ import annotations


class SimulateError(Exception):
    """The one base of every exception `simulate` raises on purpose (docs/design.md, "Errors and
    exit codes"); the message is one line meant for a person."""


class OracleError(SimulateError):
    """An oracle could not measure a plan (the message says why and what to do)."""


class TooFewPackets(OracleError):
    """A simulation reached its ``packets`` cap (departures of every instance together) before the
    slowest instance left enough windows for a confidence interval."""


class InvalidPlanError(OracleError, ValueError):
    """The plan cannot be evaluated for this spec (a bad input rather than an oracle failure):
    a task run by no thread or by two groups, tasks of a thread out of dependency order, a cycle
    between threads, a thread bound to no context."""


class SimulationTimeout(OracleError):
    """A simulation ran past its wall-clock cap (``oracle.time_cap``); the plan is recorded as
    failed, never left hanging."""


class NonFiniteResultError(OracleError):
    """An oracle produced a figure that is NaN or infinite (never recorded as a measurement)."""


class CommandFailed(OracleError):
    """The command oracle's program could not be started or exited with a non-zero status (the
    message names the command and the plan)."""


class MetricNotFound(CommandFailed):
    """The program ran but its standard output holds no figure where ``oracle.metric`` says."""


class MetricOutOfRange(CommandFailed):
    """The program's figure is outside the metric's domain (not positive, outside ``oracle.range``)
    or stayed orders of magnitude away from the run's other figures when measured again."""


class CommandTimeout(SimulationTimeout):
    """The program ran past ``oracle.timeout``; it was killed with its process group."""
