"""Errors raised by the cost oracles."""

from __future__ import annotations


class OracleError(Exception):
    """An oracle could not measure a plan (the message says why and what to do)."""


class InvalidPlanError(OracleError, ValueError):
    """The plan cannot be evaluated for this spec (a bad input rather than an oracle failure):
    a task run by no thread or by two groups, tasks of a thread out of dependency order, a cycle
    between threads, a thread bound to no context."""
