"""One CP-SAT model for all claims together, over equivalence-class counts, and the objectives read off it."""
