"""Reports over a whole cluster: pool status, device states, headroom, taint impact, metadata, comparisons."""
