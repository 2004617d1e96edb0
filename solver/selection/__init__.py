"""Selection under noise: choosing the best of a few finalists from noisy measurements
(`solver.selection.racing`)."""
