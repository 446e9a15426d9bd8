"""The progress bar: runs done, failures, elapsed and ETA, on a terminal or a log."""

import io

from fabricopt.bench.progress import ProgressBar


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_line_shows_counts_elapsed_and_eta():
    clock = _Clock()
    bar = ProgressBar(10, stream=io.StringIO(), clock=clock)
    assert "ETA ?" in bar.line(done=0, failed=0)
    clock.now = 20.0
    text = bar.line(done=4, failed=1, note="circuits/tiny/0 milp")
    assert text == ("[########............]  4/10 runs  1 failed  0:20 elapsed  ETA 0:30  "
                    "circuits/tiny/0 milp")


def test_log_stream_gets_a_line_at_most_every_interval_and_the_last():
    clock, out = _Clock(), io.StringIO()
    bar = ProgressBar(3, stream=out, clock=clock, every_s=10.0)
    bar.update(done=0, failed=0)
    clock.now = 1.0
    bar.update(done=1, failed=0)  # too soon: nothing
    clock.now = 11.0
    bar.update(done=2, failed=1)
    clock.now = 12.0
    bar.update(done=3, failed=1)  # the last one always
    lines = out.getvalue().splitlines()
    assert [line.split("  ")[1] for line in lines] == ["0/3 runs", "2/3 runs", "3/3 runs"]


def test_terminal_redraws_in_place_and_ends_the_line():
    clock, out = _Clock(), _Tty()
    bar = ProgressBar(2, stream=out, clock=clock)
    bar.update(done=1, failed=0, note="a long note here")
    bar.update(done=2, failed=0)
    bar.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    last = text.split("\r")[-1]
    assert last.startswith("[####################]  2/2 runs")
    assert len(last.rstrip("\n")) >= len(text.split("\r")[1])  # the old note is blanked


def test_disabled_bar_writes_nothing():
    out = io.StringIO()
    bar = ProgressBar(2, stream=out, enabled=False)
    bar.update(done=2, failed=0)
    bar.close()
    assert out.getvalue() == ""
