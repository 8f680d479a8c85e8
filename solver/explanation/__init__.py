"""Why claims cannot be allocated: the funnel of candidates, minimal conflicts, and what would fix them."""
