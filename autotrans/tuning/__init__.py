"""Tuning: the search space, timing, verification and the search runner."""
