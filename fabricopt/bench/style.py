"""One plotting style for every figure fabricopt draws: sizes, fonts, colours, markers,
log axes, legends, missing points and saving.

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas, without pyplot,
so drawing never depends on (or changes) a global backend or ``rcParams``. A figure is
drawn in four steps::

    fig, ax = figure("iteration time (ms)", xlabel="per-GPU bandwidth (Gbps)")
    for k, (name, xs, ys) in enumerate(series):
        ax.plot(xs, ys, label=name, **line_style(k))
    log_axis(ax, "x", all_xs, ticks="data")     # ticks on the data, plain labels
    save(fig, "out/sweep")                      # out/sweep.png and out/sweep.pdf

Every numeric axis label carries its unit in parentheses (``"runtime (s)"``,
``"utilization (%)"``, ``"instance size (GPUs)"``); :func:`axis_label` builds one and
:func:`has_unit` checks one. Colours are the Okabe-Ito palette, safe for the common
colour-vision deficiencies; each series also gets its own marker and line style, so two
series drawn on top of each other stay distinguishable (and print in grey).

References
----------
.. [1] M. Okabe and K. Ito, "Color Universal Design (CUD): how to make figures and
   presentations that are friendly to colorblind people", 2008.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from fabricopt.errors import InvalidArgument

__all__ = ["PALETTE", "MARKERS", "LINESTYLES", "COLUMN_IN", "PAGE_IN", "FONT_PT",
           "figure", "line_style", "axis_label", "has_unit", "log_axis", "mark_missing",
           "legend_outside", "save", "format_number", "format_usd", "enough_points"]

#: Okabe-Ito colours (black last: it is kept for reference lines such as bounds).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
           "#000000")
#: One marker per series, in the same order as :data:`PALETTE`.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Line styles cycle with a period (5) co-prime to the palette's (8): series ``k`` and
#: ``k + 8`` share a colour and marker but not a line style.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))
#: Width of one column of a two-column paper (ACM / IEEE), inches.
COLUMN_IN = 3.5
#: Width of the full text block of a two-column paper, inches.
PAGE_IN = 7.0
#: Font size of labels and ticks, points (the paper's caption size).
FONT_PT = 8

_FONT = {"family": "DejaVu Sans", "size": FONT_PT}
_UNIT = re.compile(r"\(([^()]*[^()\s][^()]*)\)\s*$")


def figure(ylabel: str | Sequence[str], xlabel: str | Sequence[str] | None = None, *,
           title: str | None = None, ncols: int = 1, width_in: float | None = None,
           height_in: float | None = None, sharey: bool = False):
    """A blank figure of ``ncols`` panels in the house style.

    Parameters
    ----------
    ylabel : str or sequence of str
        The y axis label (with its unit, see :func:`axis_label`); one per panel or one for
        the first panel (shared y).
    xlabel : str or sequence of str, optional
        The x axis label, one for every panel or one per panel. ``None`` for a categorical
        axis whose tick labels say what it is.
    title : str, optional
        The figure's title (papers usually put it in the caption instead).
    ncols : int
        Panels side by side.
    width_in, height_in : float, optional
        Size in inches; default one column (:data:`COLUMN_IN`) for one panel, the page
        (:data:`PAGE_IN`) for more, and a height of 0.7 x the panel width (at most 2.6 in).
    sharey : bool
        Share the y axis between panels.

    Returns
    -------
    (Figure, Axes) or (Figure, list of Axes)
        One Axes for ``ncols == 1``, else a list.

    Raises
    ------
    InvalidArgument
        If ``ncols`` is not a positive integer or a label lacks a unit.

    Examples
    --------
    >>> fig, ax = figure("runtime (s)", "instance size (GPUs)")
    >>> ax.get_xlabel(), float(fig.get_figwidth())
    ('instance size (GPUs)', 3.5)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not isinstance(ncols, int) or isinstance(ncols, bool) or ncols < 1:
        raise InvalidArgument(f"ncols = {ncols!r}: must be a positive integer")
    ylabels = [ylabel] * ncols if isinstance(ylabel, str) else list(ylabel)
    if xlabel is None or isinstance(xlabel, str):
        xlabels = [xlabel] * ncols
    else:
        xlabels = list(xlabel)
    if len(ylabels) != ncols or len(xlabels) != ncols:
        raise InvalidArgument(f"labels: {len(ylabels)} y and {len(xlabels)} x labels "
                              f"for ncols = {ncols}")
    for label in [*ylabels, *xlabels]:
        if label is not None and not has_unit(label):
            raise InvalidArgument(f"axis label = {label!r}: must end with its unit in "
                                  f"parentheses, e.g. 'runtime (s)'")
    width = width_in or (COLUMN_IN if ncols == 1 else PAGE_IN)
    panel_w = width / ncols
    height = height_in or min(2.6, max(1.8, 0.7 * panel_w * (1.0 if ncols == 1 else 1.25)))
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, sharey=sharey, squeeze=False)[0]
    for i, ax in enumerate(axes):
        if xlabels[i] is not None:
            ax.set_xlabel(xlabels[i], fontsize=FONT_PT)
        if not (sharey and i > 0):
            ax.set_ylabel(ylabels[i], fontsize=FONT_PT)
        ax.tick_params(labelsize=FONT_PT - 1, direction="out", length=3)
        ax.grid(True, which="major", color="#d0d0d0", linewidth=0.5)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    if title:
        fig.suptitle(title, fontsize=FONT_PT + 1)
    return (fig, axes[0]) if ncols == 1 else (fig, list(axes))


def line_style(k: int, *, line: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` of the ``k``-th series: colour, marker, line
    style (``line=False``: markers only).

    Series that coincide stay visible: within every four series the markers and lines
    get smaller and thinner and are drawn later (on top), and odd series have hollow
    markers, so a later series never covers an earlier one completely.

    Examples
    --------
    >>> line_style(0)["color"], line_style(1)["marker"], line_style(1)["linestyle"]
    ('#0072B2', 's', '--')
    >>> line_style(2, line=False)["linestyle"]
    'none'
    """
    color, rank = PALETTE[k % len(PALETTE)], k % 4
    return {"color": color, "marker": MARKERS[k % len(MARKERS)],
            "linestyle": LINESTYLES[k % len(LINESTYLES)] if line else "none",
            "linewidth": (2.4, 1.8, 1.3, 0.9)[rank],
            "markersize": (7.0, 5.8, 4.6, 3.4)[rank],
            "markerfacecolor": color if k % 2 == 0 else "none",
            "markeredgecolor": color, "markeredgewidth": 1.0,
            "zorder": 3 + 0.1 * rank + 0.001 * k}


def axis_label(quantity: str, unit: str) -> str:
    """``"quantity (unit)"``: the one way an axis is labelled.

    Examples
    --------
    >>> axis_label("iteration time", "ms")
    'iteration time (ms)'
    """
    if not unit.strip():
        raise InvalidArgument(f"unit = {unit!r}: must be non-empty (use '%' or 'count' "
                              f"for dimensionless quantities)")
    return f"{quantity} ({unit})"


def has_unit(label: str) -> bool:
    """Whether an axis label ends with its unit in parentheses.

    Examples
    --------
    >>> has_unit("runtime (s)"), has_unit("instance size"), has_unit("gap ()")
    (True, False, False)
    """
    return bool(_UNIT.search(label))


def _log_range(lo: float, hi: float) -> list[float]:
    """Round ticks covering [lo, hi] (the view widens to a tick up to 1.3x outside): 1-2-5
    per decade, or every digit when that leaves fewer than three; at most 7, and the
    range's ends when not even two fall inside."""
    out: list[float] = []
    for steps in ((1, 2, 5), tuple(range(1, 10))):
        out = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1,
                                           math.ceil(math.log10(hi)) + 1)
               for m in steps if lo / 1.3 <= m * 10.0 ** e <= hi * 1.3]
        if len(out) >= 3:
            break
    if len(out) < 2:  # a narrow range: its ends
        out = sorted({lo, hi})
    return _thin(out, 7)  # many decades: some of them


def _thin(values: list[float], most: int) -> list[float]:
    """At most ``most`` of the sorted ``values``, spread evenly in log, ends kept."""
    if len(values) <= most:
        return values
    logs = [math.log(v) for v in values]
    picks = [logs[0] + i * (logs[-1] - logs[0]) / (most - 1) for i in range(most)]
    return sorted({min(values, key=lambda v: abs(math.log(v) - p)) for p in picks})


def log_axis(ax, axis: str, values: Iterable[float], *, ticks: str = "data",
             most: int = 8) -> list[float]:
    """Put ``axis`` (``"x"`` or ``"y"``) of ``ax`` on a log scale with plain tick labels.

    Parameters
    ----------
    ax : Axes
    axis : {"x", "y"}
    values : iterable of float
        The data drawn on that axis (non-positive and non-finite values are ignored).
    ticks : {"data", "round"}
        ``"data"``: a tick at each distinct data value (thinned to ``most``), as for a
        swept parameter (bandwidths 100, 400, 1600); ``"round"``: 1-2-5 ticks over the
        data's range, as for measured times.
    most : int
        The most ticks with ``ticks="data"``.

    Returns
    -------
    list of float
        The tick positions.

    Examples
    --------
    >>> fig, ax = figure("runtime (s)", "bandwidth (Gbps)")
    >>> log_axis(ax, "x", [100, 400, 1600])
    [100.0, 400.0, 1600.0]
    >>> [ax.xaxis.get_major_formatter()(t) for t in ax.get_xticks()]
    ['100', '400', '1,600']
    >>> log_axis(ax, "y", [0.013, 0.4], ticks="round")
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5]
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    if axis not in ("x", "y"):
        raise InvalidArgument(f"axis = {axis!r}: must be 'x' or 'y'")
    if ticks not in ("data", "round"):
        raise InvalidArgument(f"ticks = {ticks!r}: must be 'data' or 'round'")
    data = sorted({float(v) for v in values if v is not None and math.isfinite(v) and v > 0})
    target = ax.xaxis if axis == "x" else ax.yaxis
    if not data:   # nothing to put on a log scale (every point missing): keep it linear
        return []
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    if ticks == "data":
        positions = _thin(data, most)
    else:
        positions = _log_range(data[0], data[-1])
    target.set_major_locator(FixedLocator(positions))
    target.set_major_formatter(FuncFormatter(lambda v, _pos: format_number(v)))
    target.set_minor_locator(NullLocator())
    lo, hi = min(data[0], positions[0]), max(data[-1], positions[-1])
    pad = (hi / lo) ** 0.05 if hi > lo else 1.5
    (ax.set_xlim if axis == "x" else ax.set_ylim)(lo / pad, hi * pad)
    return positions


def mark_missing(ax, xs: Sequence[float], k: int, what: str = "infeasible") -> None:
    """Show points with no value (an infeasible fabric, a run without a solution) as the
    series' colour on an ``x`` marker along the bottom edge of ``ax``, with a legend entry
    ``"(x) <what>"``.

    Parameters
    ----------
    ax : Axes
    xs : sequence of float
        The x positions without a value; nothing is drawn if empty.
    k : int
        The series index (its colour, as :func:`line_style`).
    what : str
        Why they have no value, for the legend.

    Examples
    --------
    >>> fig, ax = figure("iteration time (ms)", "bandwidth (Gbps)")
    >>> mark_missing(ax, [100, 400], 1, "SiP-Ring: infeasible")
    >>> ax.get_legend_handles_labels()[1]
    ['SiP-Ring: infeasible']
    """
    if not xs:
        return
    transform = ax.get_xaxis_transform()  # x in data, y in axes fraction
    ax.plot(list(xs), [0.0] * len(xs), transform=transform, linestyle="none",
            marker="x", markersize=6, markeredgewidth=1.5, color=PALETTE[k % len(PALETTE)],
            clip_on=False, zorder=5, label=what)


def legend_outside(target, *, where: str = "right", ncols: int | None = None):
    """A legend of every labelled series beside the data, never over it.

    Parameters
    ----------
    target : Axes or Figure
        An Axes: its series; a Figure: the series of all its axes, once per label.
    where : {"right", "below"}
        Right of the axes (one column), or below them (up to 4 columns).
    ncols : int, optional
        Override the number of columns.

    Returns
    -------
    Legend or None
        None if nothing has a label.

    Examples
    --------
    >>> fig, ax = figure("time (s)", "size (GPUs)")
    >>> _ = ax.plot([1, 2], [1, 2], label="a")
    >>> legend_outside(ax).get_texts()[0].get_text()
    'a'
    """
    from matplotlib.figure import Figure

    if where not in ("right", "below"):
        raise InvalidArgument(f"where = {where!r}: must be 'right' or 'below'")
    axes = target.axes if isinstance(target, Figure) else [target]
    handles, labels = [], []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if not labels:
        return None
    options = {"fontsize": FONT_PT - 1, "frameon": False, "handlelength": 2.6}
    if where == "right":
        anchor, loc, cols = (1.02, 0.5), "center left", ncols or 1
    else:
        anchor, loc, cols = (0.5, -0.02), "upper center", ncols or min(4, len(labels))
    if isinstance(target, Figure):
        if where == "below":
            return target.legend(handles, labels, loc=loc, bbox_to_anchor=anchor, ncols=cols,
                                 bbox_transform=target.transFigure, **options)
        last = axes[-1]
        return last.legend(handles, labels, loc=loc, bbox_to_anchor=anchor, ncols=cols,
                           **options)
    if where == "below":
        anchor = (0.5, -0.25)
    return target.legend(handles, labels, loc=loc, bbox_to_anchor=anchor, ncols=cols,
                         **options)


def save(fig, path: str | Path, *, formats: Sequence[str] = ("png", "pdf"),
         dpi: int = 200) -> list[Path]:
    """Write ``fig`` as ``PATH.png`` (raster, ``dpi``) and ``PATH.pdf`` (vector), cropped to
    its content (legends outside the axes included).

    Parameters
    ----------
    fig : Figure
    path : str or Path
        The file name; its suffix (if ``.png`` or ``.pdf``) is replaced by each format's.
    formats : sequence of str
        Among ``"png"``, ``"pdf"``, ``"svg"``.
    dpi : int
        Resolution of raster formats.

    Returns
    -------
    list of Path
        The files written, in the order of ``formats`` (the PNG first by default).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> fig, ax = figure("time (s)", "size (GPUs)")
    >>> [p.suffix for p in save(fig, pathlib.Path(tempfile.mkdtemp()) / "demo.png")]
    ['.png', '.pdf']
    """
    bad = [f for f in formats if f not in ("png", "pdf", "svg")]
    if bad or not formats:
        raise InvalidArgument(f"formats = {list(formats)!r}: choose from png, pdf, svg")
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".png", ".pdf", ".svg") else path
    for text in fig.findobj(lambda a: hasattr(a, "get_fontfamily")):
        text.set_fontfamily(_FONT["family"])
    out = []
    for fmt in formats:
        target = stem.with_name(f"{stem.name}.{fmt}")
        # Stable bytes for the same figure: no creation date in the PDF, no software tag.
        metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None} \
            if fmt == "png" else {"Date": None}
        fig.savefig(target, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.03,
                    metadata=metadata)
        out.append(target)
    return out


def format_number(x: float, digits: int = 3) -> str:
    """A number as a reader writes it: thousands separated, ``digits`` significant digits,
    no exponent between 10^-4 and 10^15.

    Examples
    --------
    >>> format_number(14280.4), format_number(1600), format_number(0.0125), format_number(2.5)
    ('14,280', '1,600', '0.0125', '2.5')
    >>> format_number(3e-6)
    '3e-06'
    """
    if x is None or not math.isfinite(x):
        return "-" if x is None else str(x)
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 1e15 or ax < 1e-4:
        return f"{x:.{digits - 1}g}"
    if ax >= 10 ** (digits - 1):
        return f"{round(x):,}"
    decimals = max(0, digits - 1 - math.floor(math.log10(ax)))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_usd(x: float) -> str:
    """A cost in US dollars, three significant digits with k / M / B.

    Examples
    --------
    >>> format_usd(14280.0), format_usd(1.5e6), format_usd(512), format_usd(2.25e9)
    ('$14.3k', '$1.5M', '$512', '$2.25B')
    >>> format_usd(0.0625)
    '$0.06'
    """
    if x is None or not math.isfinite(x):
        return "-"
    sign, ax = ("-" if x < 0 else ""), abs(x)
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if ax >= scale * 0.9995:
            return f"{sign}${format_number(ax / scale)}{suffix}"
    return f"{sign}${format_number(ax)}" if ax >= 1 else f"{sign}${ax:.2f}"


def enough_points(xs: Iterable[Any]) -> bool:
    """Whether a line plot over ``xs`` says anything: at least two distinct values.

    Examples
    --------
    >>> enough_points([100, 100]), enough_points([100, 400])
    (False, True)
    """
    return len({x for x in xs if x is not None}) >= 2
