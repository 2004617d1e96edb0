"""`python -m solver.cli` runs the `tasksolve` command line."""

import sys

from tasksolve.solver.cli import main

sys.exit(main())
