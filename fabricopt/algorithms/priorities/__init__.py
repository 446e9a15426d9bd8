"""Crux's priority compression into K levels: the paper's dynamic program and an exact algorithm."""
