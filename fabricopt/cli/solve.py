"""``fabricopt solve``: one method on one instance; a summary or the result envelope."""

from __future__ import annotations

from fabricopt.cli._args import name_values, parse_value
from fabricopt.errors import InvalidArgument, printable
from fabricopt.io import check_writable, dump, load
from fabricopt.methods import Result, get_method, solve
from fabricopt.problems import kind_of



def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve an instance with one method")
    p.add_argument("instance", help="instance JSON file, or - for standard input")
    p.add_argument("--method", required=True)
    p.add_argument("--time-limit", type=float, default=None, metavar="S")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-bound", dest="bound", action="store_false",
                   help="compute no bound on the optimum: bound, gap and bound_source are "
                        "null, and the status is feasible at most (an optimal claim is not "
                        "certified); for when only the checked, scored solution matters")
    p.add_argument("--backend", choices=("highs", "cbc"), default=None,
                   help="MILP backend (MILP methods only)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a method option (repeatable), parsed by its declared type "
                        "(`fabricopt methods KIND` lists them)")
    p.add_argument("--json", action="store_true", help="print the result envelope alone")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="also write the envelope here (checked before solving, written "
                        "atomically)")


def _summary(result: Result) -> str:
    def fmt(x):
        return "-" if x is None else f"{x:.6g}"

    lines = [f"{result.problem} / {result.method}: {result.status}",
             f"  objective ({result.sense}) {fmt(result.objective)}   bound {fmt(result.bound)}"
             f"   gap {fmt(result.gap)}   runtime {result.runtime_s:.3f} s"]
    if "message" in result.info:
        lines.append(f"  {printable(str(result.info['message']))}")
    return "\n".join(lines)


def _method_options(kind: str, method: str, items: list[str]) -> dict:
    """``--option NAME=VALUE`` items, each parsed by the method's declared type."""
    record = get_method(kind, method)
    options = {}
    for name, value in name_values(items):
        option = record.option(name)
        if option is None and not record.takes_any:
            record.validate({name: value})  # raises: names the option and lists the known ones
        options[name] = parse_value(value) if option is None else option.parse(value)
    return options


def run(args, extra=()) -> int:
    """Solve, print, and exit 1 when the method ended in ``error``."""
    return _solve(args)


def _solve(args) -> int:
    instance = load(args.instance)
    if isinstance(instance, Result):
        raise InvalidArgument(f"{args.instance}: is a result envelope, not an instance")
    options = _method_options(kind_of(instance).name, args.method, args.option)
    if args.backend is not None:
        options["backend"] = args.backend
    if args.out and args.out != "-":
        check_writable(args.out)
    result = solve(instance, args.method, time_limit=args.time_limit, seed=args.seed,
                   bound=args.bound, **options)
    if args.json:
        dump(result, "-")
    else:
        print(_summary(result))
    if args.out:
        _write_out(result, args.out, printed=args.json)
    return 1 if result.status == "error" else 0


def _write_out(result: Result, out: str, printed: bool) -> None:
    """Write the envelope to ``out``; if that fails after all (the disk filled up, the
    folder went away), put it on standard output so that the solve is not lost."""
    try:
        dump(result, out)
    except InvalidArgument as exc:
        if not printed:
            dump(result, "-")
        raise InvalidArgument(f"--out {exc}; the result envelope is on standard output "
                              f"instead") from None
