"""``fabricopt check``: is a solution feasible, and what does it score."""

from __future__ import annotations

from fabricopt.errors import InvalidArgument, printable
from fabricopt.io import load, load_solution, write_json
from fabricopt.methods import Result
from fabricopt.problems import check as check_solution
from fabricopt.problems import evaluate, kind_of



def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check a solution (or a result envelope) for an instance")
    p.add_argument("instance")
    p.add_argument("solution", help="solution or result JSON file, or - for standard input")
    p.add_argument("--json", action="store_true")


def run(args, extra=()) -> int:
    instance = load(args.instance)
    if isinstance(instance, Result):
        raise InvalidArgument(f"{args.instance}: is a result envelope, not an instance")
    kind = kind_of(instance)
    solution = load_solution(args.solution, kind.name)
    verdict = check_solution(instance, solution)
    objective = evaluate(instance, solution) if verdict.feasible else None
    if args.json:
        write_json({"feasible": verdict.feasible, "objective": objective,
                    "reason": verdict.reason}, "-")
    elif verdict.feasible:
        print(f"feasible: objective ({kind.sense}) {objective:.6g}")
    else:
        print(f"infeasible: {printable(verdict.reason)}")
    return 0 if verdict.feasible else 1
