"""TSBSched and BlackBox: profiling tables, prediction formulas, selection phase."""
