"""``fabricopt schema``: the JSON Schema of a kind's instance, solution or result envelope."""

from __future__ import annotations

import json



def add_parser(sub) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of a kind's instance, "
                                      "solution or result envelope",
                       description="Print a JSON Schema (draft 2020-12): of KIND's instance "
                                   "(default), its solution, or the result envelope of a "
                                   "solve of KIND; `schema compare` prints the schema of "
                                   "`fabricopt compare --json`.")
    p.add_argument("kind", help="a problem kind, or compare")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--solution", dest="which", action="store_const", const="solution",
                       default="instance", help="the solution's schema")
    which.add_argument("--result", dest="which", action="store_const", const="result",
                       help="the result envelope's schema (fabricopt solve --json)")


def run(args, extra=()) -> int:
    from fabricopt.errors import InvalidArgument
    from fabricopt.schemas import compare_schema, schema

    if args.kind == "compare":
        if args.which != "instance":
            raise InvalidArgument(f"--{args.which}: `schema compare` has no {args.which} "
                                  f"schema (it is the output of fabricopt compare --json)")
        print(json.dumps(compare_schema(), indent=2))
        return 0
    print(json.dumps(schema(args.kind, args.which), indent=2))
    return 0
