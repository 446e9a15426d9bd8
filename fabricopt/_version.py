"""The package version (one place: the CLI, the bench store and the docs read it)."""

__version__ = "0.1.0"
