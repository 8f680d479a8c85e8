"""What both searches read: the node's devices, each claim's alternatives and their candidates, and
the results written back as ``status.allocation``."""
