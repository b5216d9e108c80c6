"""`make bench`: timings printed as ratios measured in one run (absolute times here are noisy)."""
