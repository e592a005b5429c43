"""Tools on top of the API: the benchmark against peers and the tuning report."""
