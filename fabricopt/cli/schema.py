"""``fabricopt schema``: the JSON Schema of a kind's instance, solution or result envelope."""

from __future__ import annotations

import json



def add_parser(sub) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of a kind's instance, "
                                      "solution or result envelope",
                       description="Print a JSON Schema (draft 2020-12): of KIND's instance "
                                   "(default), its solution, or the result envelope of a "
                                   "solve of KIND.")
    p.add_argument("kind")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--solution", dest="which", action="store_const", const="solution",
                       default="instance", help="the solution's schema")
    which.add_argument("--result", dest="which", action="store_const", const="result",
                       help="the result envelope's schema (fabricopt solve --json)")


def run(args, extra=()) -> int:
    from fabricopt.schemas import schema

    print(json.dumps(schema(args.kind, args.which), indent=2))
    return 0
