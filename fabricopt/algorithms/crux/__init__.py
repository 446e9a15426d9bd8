"""Crux end to end (GPU intensity, path selection, priority compression), its baselines, and the exhaustive enumeration of small instances."""
