"""One node, all claims: a :class:`~.problem.Problem` in, an :class:`~.api.Allocation` out.

Planning (what each claim may take) feeds two searches that read the same rules: the depth-first
search Kubernetes runs, and one CP-SAT model over equivalence classes of devices.
"""
