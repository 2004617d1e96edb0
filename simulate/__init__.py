"""How good is this plan? The closed-form model, the SimPy simulation and the command oracle."""
