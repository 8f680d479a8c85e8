"""Capacity decisions on the cluster-wide counting model: how many copies fit, how many nodes to add.

``fit`` (how many copies of a workload fit now, and where) and ``scale_up`` (the fewest, cheapest nodes
from templates so that the pending pods fit, beside cluster-autoscaler's first-fit-decreasing estimate)
are the joint placement's counting model (``solver.batch``) with another objective: the same pods per
node and class as integer counts, every DRA rule lifted to counts, devices read off per node and
verified. ``counted`` holds what both share: the anytime solve, decoding, what an answer reports.
"""
