"""``fabricopt methods``: the registered methods of each kind, their tags and options."""

from __future__ import annotations

from fabricopt.methods import all_methods
from fabricopt.problems import get_kind, kinds



def add_parser(sub) -> None:
    p = sub.add_parser("methods", help="list the registered methods")
    p.add_argument("kind", nargs="?", default=None)


def run(args, extra=()) -> int:
    selected = [args.kind] if args.kind else kinds()
    for kind in selected:
        get_kind(kind)
        records = all_methods(kind)
        print(f"{kind} ({get_kind(kind).sense}):")
        for m in records:
            tags = [t for t, on in (("exact", m.exact), ("bound only", m.bound_only),
                                    ("honours time limit", m.honours_time_limit)) if on]
            if m.source != "builtin":
                tags.append(m.source)
            tag = f" [{', '.join(tags)}]" if tags else ""
            print(f"  {m.name:<16}{m.summary}{tag}")
            if not m.honours_time_limit and m.time_limit_note:
                print(f"      runs to its end whatever --time-limit: {m.time_limit_note}")
            for option in m.options:
                print(f"      --option {option.describe()}")
    return 0
