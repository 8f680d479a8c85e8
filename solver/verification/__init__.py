"""The independent verifier: a second reading of the spec that checks every answer (it imports no rule)."""
