"""Spec commands: validate, schema, examples, count."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the spec commands to the `tasksolve` application."""
