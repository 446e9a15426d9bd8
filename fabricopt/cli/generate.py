"""``fabricopt generate``: a seeded instance of a kind, sized by the generator's own options."""

from __future__ import annotations

import argparse
import inspect

from fabricopt.cli._args import parse_value
from fabricopt.errors import InvalidArgument, InvalidOption
from fabricopt.io import check_writable, dump
from fabricopt.problems import generate, get_kind, kinds



def add_parser(sub) -> None:
    p = sub.add_parser("generate", help="write a seeded instance of a problem kind",
                       add_help=False, usage="fabricopt generate KIND [--seed N] "
                                             "[--out FILE] [--SIZE VALUE ...]",
                       description="Write a seeded instance of KIND as JSON. Size options\n"
                                   "depend on the kind; `fabricopt generate KIND --help` lists\n"
                                   "them, e.g. `fabricopt generate circuits --gpus 32 "
                                   "--switches 8`.",
                       epilog=_generate_epilog(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", nargs="?", default=None, help="a problem kind")
    p.add_argument("-h", "--help", action="store_true",
                   help="show this help, or with KIND its size options, and exit")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the generator (default 0)")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.set_defaults(usage_parser=p)


def _size_parameters(kind: str) -> list[inspect.Parameter]:
    """The size options of ``kind``'s generator (every keyword but ``seed``)."""
    problem = get_kind(kind)
    params = inspect.signature(problem.generate).parameters if problem.generate else {}
    return [p for name, p in params.items() if name != "seed"]


def size_flags(kind: str) -> list[str]:
    """``--gpus INT (default 16)``, one per size option of ``kind``."""
    out = []
    for p in _size_parameters(kind):
        kind_name = str(p.annotation).replace("'", "").replace(" | None", "")
        kind_name = kind_name.upper() if kind_name in ("int", "float", "str", "bool") else "VALUE"
        default = "chosen by the generator" if p.default is None else repr(p.default)
        out.append(f"--{p.name.replace('_', '-')} {kind_name} (default {default})")
    return out


def _generate_epilog() -> str:
    lines = ["size options (default: the generator's):"]
    for kind in kinds():
        lines.append(f"  {kind}: " + ", ".join(f.split(" ")[0] for f in size_flags(kind)))
    return "\n".join(lines)


def generate_help(kind: str) -> str:
    """``fabricopt generate KIND --help``: the kind's generator and its size options."""
    doc = (inspect.getdoc(get_kind(kind).generate) or "").split("\n\n")[0]
    lines = [f"usage: fabricopt generate {kind} [--seed N] [--out FILE] [--SIZE VALUE ...]",
             "", f"Write a seeded {kind} instance as JSON (to stdout unless --out).",
             "", " ".join(doc.split()), "", "options:",
             "  --seed N     seed of the generator (default 0): same seed, same instance",
             "  --out FILE   write the instance here", "", f"size options of {kind}:"]
    lines += [f"  {flag}" for flag in size_flags(kind)]
    return "\n".join(lines)


def _size_options(kind: str, extra: list[str]) -> dict:
    """Turn ``--gpus 32 --switches 8`` into keyword arguments typed by the generator."""
    problem = get_kind(kind)
    params = inspect.signature(problem.generate).parameters if problem.generate else {}
    out = {}
    i = 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--") or i + 1 >= len(extra):
            raise InvalidOption(f"{flag}: expected --NAME VALUE size options")
        name = flag[2:].replace("-", "_")
        if name not in params or name == "seed":
            options = ", ".join("--" + n.replace("_", "-") for n in params if n != "seed")
            raise InvalidOption(f"--{flag[2:]}: not a size option of {kind} (options: {options})")
        default = params[name].default
        value = extra[i + 1]
        try:
            if isinstance(default, bool):
                out[name] = value.lower() in ("1", "true", "yes")
            elif isinstance(default, int):
                out[name] = int(value)
            elif isinstance(default, float):
                out[name] = float(value)
            else:
                out[name] = parse_value(value)
        except ValueError:
            raise InvalidOption(f"--{flag[2:]} = {value!r}: must be a "
                                f"{type(default).__name__}") from None
        i += 2
    return out


def run(args, extra=()) -> int:
    if args.help:
        if args.kind is None:
            args.usage_parser.print_help()
        else:
            print(generate_help(args.kind))
        return 0
    if args.kind is None:
        raise InvalidArgument(f"generate: a problem kind is required ({', '.join(kinds())})")
    if args.out and args.out != "-":
        check_writable(args.out)
    instance = generate(args.kind, seed=args.seed, **_size_options(args.kind, extra))
    dump(instance, args.out if args.out else "-")
    return 0
