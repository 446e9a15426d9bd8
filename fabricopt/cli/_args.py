"""Argument helpers the commands share: option values, NAME=VALUE lists, one-line parse errors."""

from __future__ import annotations

import argparse
import json

from fabricopt.errors import InvalidOption, printable

__all__ = ["Parser", "parse_value", "name_values"]



class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit code 2."""

    def error(self, message):
        self.exit(2, f"fabricopt: error: {printable(message)}\n")


def parse_value(text: str):
    """A JSON value if ``text`` is one, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def name_values(items: list[str]) -> list[tuple[str, str]]:
    """``--option NAME=VALUE`` items as (name, text) pairs, ``-`` in names read as ``_``."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InvalidOption(f"--option {item!r}: expected NAME=VALUE")
        out.append((name.strip().replace("-", "_"), value))
    return out
