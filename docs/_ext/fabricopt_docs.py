"""Sphinx directives that render parts of the reference from the code at build time.

- ``.. fabricopt-methods::`` — the registered methods of every kind with their options;
- ``.. fabricopt-cli::`` — the ``--help`` of the command and of every subcommand;
- ``.. fabricopt-schema:: KIND [instance|solution|result]`` (or ``compare``) — a shipped JSON Schema;
- ``.. fabricopt-sizes::`` — the size options of every kind's generator.

Generated, they cannot drift from what the code does.
"""

from __future__ import annotations

import inspect
import json

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles


def _parse(directive: Directive, text: str) -> list:
    node = nodes.section()
    node.document = directive.state.document
    nested_parse_with_titles(directive.state, StringList(text.splitlines(), "<generated>"),
                             node)
    return node.children


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|") or " "


def _options(record) -> list[tuple[str, str, str]]:
    """(name, default, meaning) of a method's options: its declared options where the
    registry has them, else the keyword-only parameters of its function."""
    declared = getattr(record, "options", ()) or ()
    out = []
    for option in declared:
        name = getattr(option, "name", None)
        if name is None:
            continue
        doc = getattr(option, "doc", "") or getattr(option, "help", "") or ""
        choices = getattr(option, "choices", None)
        if choices:
            doc = f"{doc} (one of {', '.join(map(str, choices))})"
        out.append((name, repr(getattr(option, "default", None)), doc))
    if out or declared:
        return out
    params = inspect.signature(record.fn).parameters.values()
    for p in params:
        if p.kind is p.KEYWORD_ONLY and p.name not in ("time_limit", "seed"):
            out.append((p.name, repr(p.default), ""))
    return out


class MethodsDirective(Directive):
    """A table per problem kind: method, kind of method, what it is, its options."""

    def run(self):
        from fabricopt.problems import get_kind, kinds
        from fabricopt.methods import all_methods

        lines = []
        for kind in kinds():
            lines += [f".. rubric:: {kind} ({get_kind(kind).sense}imize)", "",
                      ".. list-table::", "   :header-rows: 1", "   :widths: 14 12 44 30", "",
                      "   * - method", "     - type", "     - what it is", "     - options"]
            for m in all_methods(kind):
                if m.source != "builtin":
                    continue
                tag = "bound only" if m.bound_only else ("exact" if m.exact else "heuristic")
                opts = "; ".join(f"``{n}={d}``" + (f" {_cell(doc)}" if doc else "")
                                 for n, d, doc in _options(m)) or "none"
                lines += [f"   * - ``{m.name}``", f"     - {tag}", f"     - {_cell(m.summary)}",
                          f"     - {opts}"]
            lines.append("")
        return _parse(self, "\n".join(lines))


class CliDirective(Directive):
    """``fabricopt --help`` and each subcommand's ``--help``, as literal blocks."""

    def run(self):
        import argparse

        from fabricopt.cli.generate import generate_help
        from fabricopt.cli import build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        blocks = [("fabricopt", parser.format_help())]
        for name, command in sub.choices.items():
            blocks.append((f"fabricopt {name}", command.format_help()))
            nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
            for action in nested:
                for child, p in action.choices.items():
                    blocks.append((f"fabricopt {name} {child}", p.format_help()))
        blocks.insert(next(i for i, (t, _) in enumerate(blocks) if t == "fabricopt generate") + 1,
                      ("fabricopt generate circuits --help", generate_help("circuits")))
        lines = []
        for title, text in blocks:
            lines += [title, "-" * len(title), "", ".. code-block:: text", ""]
            lines += ["   " + line for line in text.rstrip().splitlines()] + [""]
        return _parse(self, "\n".join(lines))


class SchemaDirective(Directive):
    """A shipped JSON Schema as a literal JSON block."""

    required_arguments = 1
    optional_arguments = 1

    def run(self):
        from fabricopt.schemas import compare_schema, schema

        kind = self.arguments[0]
        which = self.arguments[1] if len(self.arguments) > 1 else "instance"
        text = json.dumps(compare_schema() if kind == "compare" else schema(kind, which),
                          indent=2)
        block = nodes.literal_block(text, text)
        block["language"] = "json"
        return [block]


class SizesDirective(Directive):
    """The size options of each kind's generator (``fabricopt generate KIND --SIZE N``)."""

    def run(self):
        from fabricopt.cli.generate import size_flags
        from fabricopt.problems import kinds

        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 15 85", "",
                 "   * - kind", "     - size options (``fabricopt generate KIND --help``)"]
        for kind in kinds():
            lines += [f"   * - ``{kind}``",
                      "     - " + "; ".join(f"``{f}``" for f in size_flags(kind))]
        return _parse(self, "\n".join(lines))


class ExportColumnsDirective(Directive):
    """Each exportable model's column families, with an example name, built on a
    small generated instance."""

    SMALL = {"circuits": {"gpus": 4, "switches": 2}, "priorities": {"jobs": 4, "levels": 2},
             "wavelengths": {"nodes": 4, "wavelengths": 2, "max_hops": 2},
             "topology": {"servers": 4, "degree": 2}, "placement": {"ops": 4, "gpus": 2}}

    def run(self):
        import re

        import fabricopt
        from fabricopt.models.export import EXPORTABLE, build_model, portable_name

        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 22 18 20 40", "",
                 "   * - model", "     - family", "     - type", "     - e.g. (first column)"]
        for kind, method in EXPORTABLE:
            model = build_model(fabricopt.generate(kind, seed=1, **self.SMALL[kind]), method)
            families = {}
            problem = model.problem
            if hasattr(problem, "blocks"):   # a SparseModel: one family per block
                arrays = problem.arrays()
                integer = set(arrays.integer.tolist())
                for block in problem.blocks.values():
                    if block.size:
                        cat = "Integer" if block.start in integer else "Continuous"
                        families.setdefault(block.name,
                                            (portable_name(arrays.names[block.start]), cat))
            else:                            # a PuLP problem
                for v in problem.variables():
                    family = (v.name.split("_(")[0] if "_(" in v.name
                              else re.sub(r"(_\d+)+$", "", v.name))
                    families.setdefault(family, (portable_name(v.name), v.cat))
            for family, (example, cat) in families.items():
                lines += [f"   * - ``{kind}`` / ``{method}``", f"     - ``{family}``",
                          f"     - {cat.lower()}", f"     - ``{example}``"]
        return _parse(self, "\n".join(lines))


def setup(app):
    app.add_directive("fabricopt-export-columns", ExportColumnsDirective)
    app.add_directive("fabricopt-methods", MethodsDirective)
    app.add_directive("fabricopt-cli", CliDirective)
    app.add_directive("fabricopt-schema", SchemaDirective)
    app.add_directive("fabricopt-sizes", SizesDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
