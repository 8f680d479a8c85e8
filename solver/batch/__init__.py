"""Joint placement: every pending pod placed at once, the most pods (by priority) the cluster holds."""
