"""The one exception type of `evt`: bad input that a caller (e.g. the CLI) can report as is."""

from __future__ import annotations


class EVTError(ValueError):
    """Input that cannot be analysed (too few points, constant sample, NaN/inf, unreadable file...).

    The message is one line meant for a person; it never contains a traceback.
    """
