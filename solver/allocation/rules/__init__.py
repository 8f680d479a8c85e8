"""One module per DRA rule, each used by both searches; ``registry.RULES`` lists them in check order.

This package imports nothing on its own, so that the inventory can import the reachability
rule's functions without pulling in every rule.
"""
