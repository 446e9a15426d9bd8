"""The argument helpers the commands share (fabricopt.cli._args)."""

import pytest

from fabricopt.cli._args import Parser, name_values, parse_value
from fabricopt.errors import InvalidOption


def test_parse_value_reads_json_and_keeps_other_text():
    assert parse_value("3") == 3 and parse_value("true") is True
    assert parse_value("[1, 2]") == [1, 2] and parse_value("dp") == "dp"


def test_name_values_reads_dashes_as_underscores():
    assert name_values(["max-evals=3", "rings=full"]) == [("max_evals", "3"), ("rings", "full")]
    with pytest.raises(InvalidOption, match=r"--option 'rounds': expected NAME=VALUE"):
        name_values(["rounds"])


def test_the_parser_reports_a_usage_error_on_one_line(capsys):
    parser = Parser(prog="fabricopt")
    parser.add_argument("--gpus", type=int)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--gpus", "many"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("fabricopt: error: argument --gpus") and err.count("\n") == 1
