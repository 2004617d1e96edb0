"""``python -m tasksolve``: the same command line as ``tasksolve``."""

from tasksolve.solver.cli import main

raise SystemExit(main())
