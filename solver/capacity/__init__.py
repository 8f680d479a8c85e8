"""Capacity decisions: how many copies fit, how many nodes to add, what to evict, what to move.

``fit`` (how many copies of a workload fit now, and where) and ``scale_up`` (the fewest, cheapest nodes
from templates so that the pending pods fit, beside cluster-autoscaler's first-fit-decreasing estimate,
``ffd``) are the joint placement's counting model (``solver.batch``) with another objective: the same
pods per node and class as integer counts, every DRA rule lifted to counts, devices read off per node
and verified; ``counted`` holds what both share. ``preempt`` (kube-scheduler's victims beside the
fewest; ``budgets`` for PodDisruptionBudgets) and ``defrag`` (moves that free whole GPUs) search over
per-node checks by drasat's scheduler, every answer verified; ``templates`` reads node templates.
"""
