"""The ``fabricopt`` command: :func:`main`, and one module per subcommand."""

from fabricopt.cli.app import COMMANDS, build_parser, main

__all__ = ["main", "build_parser", "COMMANDS"]
