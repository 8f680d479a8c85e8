"""Pods placed on nodes as kube-scheduler places them, one at a time; its plugins in ``plugins/``."""
