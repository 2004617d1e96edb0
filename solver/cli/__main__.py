"""`python -m solver.cli` runs the `tasksolve` command line."""

import sys

from solver.cli import main

sys.exit(main())
