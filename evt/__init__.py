"""How good could it be? Extreme Value Theory on any column of numbers (imports nothing of ours)."""
