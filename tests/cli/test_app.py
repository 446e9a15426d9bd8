"""The command's dispatch and exit codes (fabricopt.cli.app)."""

import logging

from fabricopt.cli import app


def test_every_command_has_a_parser_and_a_runner():
    parser = app.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(app.COMMANDS)
    assert all(callable(m.add_parser) and callable(m.run) for m in app.COMMANDS.values())


def test_a_fabric_error_exits_2_and_any_other_error_is_a_bug(monkeypatch, capsys):
    assert app.main(["solve", "/no/such/file.json", "--method", "exact"]) == 2
    assert capsys.readouterr().err.startswith("fabricopt: error: ")

    def broken(args, extra=()):
        raise KeyError("boom")

    monkeypatch.setattr(app.COMMANDS["methods"], "run", broken)
    assert app.main(["methods"]) == 1
    err = capsys.readouterr().err
    assert "fabricopt: internal error: KeyError" in err and "Traceback" not in err
    logger = logging.getLogger("fabricopt")
    handlers, level = list(logger.handlers), logger.level
    try:
        assert app.main(["-v", "methods"]) == 1
        assert "Traceback" in capsys.readouterr().err
    finally:   # -v hangs a handler on the captured stderr: later tests must not log to it
        logger.handlers[:] = handlers
        logger.setLevel(level)
