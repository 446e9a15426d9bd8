"""``fabricopt export``: a method's MILP as MPS/LP, and a solver's values back to a solution."""

from __future__ import annotations

import sys

from fabricopt.cli._args import name_values, parse_value
from fabricopt.errors import InvalidArgument
from fabricopt.io import dump, load
from fabricopt.methods import Result



def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write a method's MILP as an MPS or LP file, or map "
                                      "a solver's answer back",
                       description="Write the exact MILP that METHOD solves for INSTANCE to "
                                   "--out (.mps or .lp, by HiGHS's writer) for any MILP "
                                   "solver; with --decode VALUES, turn that solver's column "
                                   "values (a .sol file or a JSON object) into the kind's "
                                   "solution JSON, for `fabricopt check`.")
    p.add_argument("instance", help="instance JSON file, or - for standard input")
    p.add_argument("--method", default="milp", help="an exportable method (default: milp)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a formulation option (repeatable), as given to the export")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="the model file (.mps or .lp); with --decode, the solution JSON "
                        "(default: stdout)")
    p.add_argument("--decode", default=None, metavar="VALUES",
                   help="a solver's column values for the exported model")


def run(args, extra=()) -> int:
    from fabricopt.models.export import decode_values, write_model

    instance = load(args.instance)
    if isinstance(instance, Result):
        raise InvalidArgument(f"{args.instance}: is a result envelope, not an instance")
    # formulation options (build's keywords), not the method's: parsed as JSON values
    options = {name: parse_value(value) for name, value in name_values(args.option)}
    if args.decode is not None:
        solution = decode_values(instance, args.decode, args.method, **options)
        dump(solution, args.out if args.out else "-")
        return 0
    if args.out is None:
        raise InvalidArgument("export: --out FILE (.mps or .lp) is required")
    path = write_model(instance, args.out, args.method, **options)
    print(f"wrote {path}; map a solver's answer back with `fabricopt export "
          f"{args.instance} --method {args.method} --decode VALUES`", file=sys.stderr)
    return 0
