"""The plotting style: labels with units, distinct series, log ticks on the data, legends
beside the data, missing points shown, PNG + PDF files, readable numbers."""

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricopt.bench import style
from fabricopt.errors import InvalidArgument


def test_figure_rejects_a_label_without_unit():
    with pytest.raises(InvalidArgument, match=r"axis label = 'instance size': must end"):
        style.figure("runtime (s)", "instance size")
    with pytest.raises(InvalidArgument, match=r"ncols = 0"):
        style.figure("runtime (s)", "size (GPUs)", ncols=0)


def test_figure_panels_share_the_page_width():
    fig, axes = style.figure("time (ms)", ["a (Gbps)", "b (Gbps)", "c (Gbps)"], ncols=3,
                             sharey=True)
    assert len(axes) == 3 and float(fig.get_figwidth()) == style.PAGE_IN
    assert axes[0].get_ylabel() == "time (ms)" and axes[1].get_ylabel() == ""
    assert [ax.get_xlabel() for ax in axes] == ["a (Gbps)", "b (Gbps)", "c (Gbps)"]


def test_forty_series_all_look_different():
    looks = {(s["color"], s["marker"], str(s["linestyle"]))
             for s in map(style.line_style, range(40))}
    assert len(looks) == 40
    first = [style.line_style(k) for k in range(len(style.PALETTE))]
    assert len({s["color"] for s in first}) == len({s["marker"] for s in first}) == 8


def test_palette_is_okabe_ito():
    # The eight colours of Okabe & Ito (2008), the colour-blind-safe set.
    assert set(style.PALETTE) == {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                  "#56B4E9", "#F0E442", "#000000"}


def _labels(ax, axis):
    target = ax.xaxis if axis == "x" else ax.yaxis
    fmt = target.get_major_formatter()
    return [fmt(t) for t in target.get_majorticklocs()]


def test_data_ticks_sit_on_the_data_with_plain_labels():
    fig, ax = style.figure("time (ms)", "bandwidth (Gbps)")
    ax.plot([100, 400, 1600], [24.0, 8.0, 3.0])
    assert style.log_axis(ax, "x", [100, 400, 1600]) == [100, 400, 1600]
    assert _labels(ax, "x") == ["100", "400", "1,600"]
    assert ax.get_xscale() == "log"
    assert not ax.xaxis.get_minorticklocs().size


def test_round_ticks_cover_measured_values():
    fig, ax = style.figure("time (ms)", "bandwidth (Gbps)")
    ticks = style.log_axis(ax, "y", [3.0, 8.0, 24.0], ticks="round")
    assert ticks == [5.0, 10.0, 20.0]
    lo, hi = ax.get_ylim()
    assert lo < 3.0 and hi > 24.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-3, 1e7), min_size=1, max_size=30),
       st.sampled_from(["data", "round"]))
def test_log_ticks_are_few_plain_and_within_the_view(values, ticks):
    fig, ax = style.figure("time (s)", "size (GPUs)")
    positions = style.log_axis(ax, "x", values, ticks=ticks)
    assert 1 <= len(positions) <= 8
    lo, hi = ax.get_xlim()
    assert lo <= min(values) and max(values) <= hi
    assert lo <= min(positions) and max(positions) <= hi
    for label in _labels(ax, "x"):
        assert "$" not in label and "times" not in label and "e" not in label
    if ticks == "data":
        assert set(positions) <= {float(v) for v in values}


def test_invalid_log_axis_arguments():
    fig, ax = style.figure("time (s)", "size (GPUs)")
    with pytest.raises(InvalidArgument, match=r"axis = 'z'"):
        style.log_axis(ax, "z", [1, 2])
    with pytest.raises(InvalidArgument, match=r"ticks = 'nice'"):
        style.log_axis(ax, "x", [1, 2], ticks="nice")


def test_missing_points_are_drawn_and_labelled():
    fig, ax = style.figure("iteration time (ms)", "bandwidth (Gbps)")
    style.mark_missing(ax, [100, 400], 2, "SiP-Ring: infeasible")
    (line,) = ax.lines
    assert list(line.get_xdata()) == [100, 400] and line.get_marker() == "x"
    assert line.get_color() == style.PALETTE[2]
    assert ax.get_legend_handles_labels()[1] == ["SiP-Ring: infeasible"]
    style.mark_missing(ax, [], 0)
    assert len(ax.lines) == 1


@pytest.mark.parametrize("where", ["right", "below"])
@pytest.mark.parametrize("panels", [1, 2])
def test_legend_sits_outside_every_axes(where, panels):
    fig, axes = style.figure("time (s)", "size (GPUs)", ncols=panels)
    axes = axes if panels > 1 else [axes]
    for ax in axes:
        for k in range(5):
            ax.plot([1, 2, 3], [k, k + 1, k + 2], label=f"series {k}", **style.line_style(k))
    legend = style.legend_outside(fig if panels > 1 else axes[0], where=where)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    assert len(legend.get_texts()) == 5
    for ax in axes:
        assert not box.overlaps(ax.get_window_extent(renderer))


def test_no_legend_without_labels():
    fig, ax = style.figure("time (s)", "size (GPUs)")
    ax.plot([1, 2], [1, 2])
    assert style.legend_outside(ax) is None
    with pytest.raises(InvalidArgument, match=r"where = 'left'"):
        style.legend_outside(ax, where="left")


def test_save_writes_a_png_and_a_vector_pdf(tmp_path):
    fig, ax = style.figure("time (s)", "size (GPUs)")
    ax.plot([1, 2, 4], [3, 1, 2], label="a", **style.line_style(0))
    style.legend_outside(ax)
    png, pdf = style.save(fig, tmp_path / "fig.png")
    assert (png.name, pdf.name) == ("fig.png", "fig.pdf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-" and b"/Subtype /Image" not in data  # lines, not pixels
    with pytest.raises(InvalidArgument, match=r"formats = \['jpg'\]"):
        style.save(fig, tmp_path / "fig", formats=["jpg"])


def test_saving_twice_gives_the_same_pdf(tmp_path):
    fig, ax = style.figure("time (s)", "size (GPUs)")
    ax.plot([1, 2], [1, 2])
    (a,) = style.save(fig, tmp_path / "a", formats=["pdf"])
    (b,) = style.save(fig, tmp_path / "b", formats=["pdf"])
    assert a.read_bytes() == b.read_bytes()


def _parse(text: str) -> float:
    return float(text.replace(",", ""))


@given(st.floats(1e-4, 1e15, exclude_max=True) | st.floats(-1e15, -1e-4, exclude_min=True))
def test_format_number_is_plain_and_close(x):
    text = style.format_number(x)
    assert "e" not in text
    assert math.isclose(_parse(text), x, rel_tol=5e-3)


@given(st.floats(0, 1e12))
def test_format_usd_is_short_and_close(x):
    text = style.format_usd(x)
    match = re.fullmatch(r"\$([0-9.,]+)([kMB]?)", text)
    assert match, text
    value = _parse(match.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "B": 1e9}[match.group(2)]
    assert math.isclose(value, x, rel_tol=5e-3, abs_tol=5e-3)
    assert len(match.group(1).replace(",", "").replace(".", "")) <= 4


def test_a_single_value_is_not_worth_a_line():
    assert not style.enough_points([])
    assert not style.enough_points([8, 8, None])
    assert style.enough_points([8, 16])
