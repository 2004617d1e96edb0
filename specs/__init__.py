"""What is the problem? The spec language: pydantic models, YAML loading with file:line errors,
units, JSON Schema, plans and their symmetry, and the example library."""
