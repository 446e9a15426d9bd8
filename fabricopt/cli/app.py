"""The ``fabricopt`` command.

Exit codes: 0 success (for ``check``: feasible), 1 a failed outcome (``check``:
infeasible; ``solve``: status ``error``), 2 bad input — printed as one line on stderr, 130 interrupted, 141 the reader of standard
output went away.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from typing import Sequence

from fabricopt._version import __version__
from fabricopt.cli import (bench, check, compare, export, generate, methods, reproduce, schema,
                           solve)
from fabricopt.cli._args import Parser
from fabricopt.errors import FabricError, printable

__all__ = ["main", "build_parser", "COMMANDS"]

#: The subcommands, in the order ``fabricopt --help`` lists them: each module has
#: ``add_parser(sub)`` and ``run(args, extra) -> exit code``.
COMMANDS = {"solve": solve, "check": check, "methods": methods, "generate": generate,
            "schema": schema, "export": export, "bench": bench, "reproduce": reproduce,
            "compare": compare}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="fabricopt", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"fabricopt {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log diagnostics on stderr (-v: progress, -vv: debug)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in COMMANDS.values():
        module.add_parser(sub)
    for command in sub.choices.values():  # -v also after the command: `fabricopt solve -v`
        command.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                             help="log diagnostics on stderr (-v: progress, -vv: debug)")
    return parser


def _configure_logging(verbosity: int) -> None:
    """Send the ``fabricopt`` loggers' records to stderr: INFO with -v, DEBUG with -vv."""
    if verbosity <= 0:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fabricopt: %(levelname)s: %(name)s: %(message)s"))
    logger = logging.getLogger("fabricopt")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fabricopt`` command; returns the exit code.

    0 success (``check``: feasible), 1 an answer that is not one (``solve`` ended in
    ``error``, ``check`` infeasible) or an internal error, 2 bad input (every
    :class:`~fabricopt.errors.FabricError`), 130 interrupted.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "generate":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    _configure_logging(args.verbose)
    if args.command == "compare":
        args.given = compare.given_options(args.usage_parser, argv)
    try:
        return COMMANDS[args.command].run(args, extra)
    except FabricError as exc:
        print(f"fabricopt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fabricopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``fabricopt schema KIND | head``): stop quietly, as a
        # command killed by SIGPIPE would, and keep Python's exit flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except Exception as exc:  # noqa: BLE001 — a bug of fabricopt's, shown as one
        if args.verbose:
            traceback.print_exc()
        print(f"fabricopt: internal error: {type(exc).__name__}: {printable(str(exc))} (a bug: please "
              f"report it; -v shows the traceback)", file=sys.stderr)
        return 1
