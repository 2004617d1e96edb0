"""Which plan? Samplers, baselines, CP-SAT models, pipeline heuristics, certification and the CLI.

`solver` sits at the bottom of the dependency table in docs/design.md: it may import `specs`,
`simulate` and `evt`; none of them imports `solver`.
"""
