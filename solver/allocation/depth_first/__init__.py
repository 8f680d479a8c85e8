"""Kubernetes' own search, depth first with backtracking, and the first-fit guess built from it."""
