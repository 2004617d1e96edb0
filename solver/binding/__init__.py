"""Thread-to-context binding: the CP-SAT model, its symmetry breaking, the top-K plans."""
