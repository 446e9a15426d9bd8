"""Every experiment's figure, drawn from the stored results the repository ships
(docs/gallery_results/), has axis labels with units, its PNG and PDF, and the
documentation's gallery shows it."""

import inspect
import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from fabricopt.bench import experiments as exp
from fabricopt.bench import style
from fabricopt.bench.gallery import load_stored, render_stored

ROOT = Path(__file__).resolve().parents[2]
STORED = sorted((ROOT / "docs" / "gallery_results").glob("*.json"))
GALLERY = ROOT / "docs" / "gallery.rst"
# What an experiment module calls when its section draws a figure.
_DRAWS = re.compile(r"savefig|style\.save|figure_lines|plot_curves|iteration_vs_bandwidth")


def _drawing_experiments():
    return sorted(e.name for e in exp.experiments()
                  if _DRAWS.search(inspect.getsource(inspect.getmodule(e.render))))


def test_every_experiment_that_draws_has_a_stored_result():
    assert {p.stem for p in STORED} >= set(_drawing_experiments())


def _categorical(axis) -> bool:
    """Whether the axis's ticks are names (scenarios, methods) rather than numbers."""
    formatter = axis.get_major_formatter()
    labels = [formatter(t) for t in axis.get_majorticklocs()]

    def number(text):
        try:
            float(text.replace(",", "").replace("\u2212", "-"))
            return True
        except ValueError:
            return False

    return bool(labels) and not all(number(label) for label in labels if label)


@pytest.mark.parametrize("stored", STORED, ids=lambda p: p.stem)
def test_stored_result_draws_figures_with_units(stored, tmp_path, monkeypatch):
    drawn = []
    savefig = Figure.savefig

    def recording_savefig(fig, *args, **kwargs):
        drawn.append(fig)
        return savefig(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording_savefig)
    body, figures = render_stored(stored, tmp_path)
    assert figures, f"{stored.name}: its experiment drew no figure"
    for png in figures:
        assert f"]({png.name})" in body, f"the section does not show {png.name}"
    for fig in drawn:
        for ax in fig.axes:
            if not (ax.lines or ax.patches or ax.collections):
                continue
            for axis, label in ((ax.xaxis, ax.get_xlabel()), (ax.yaxis, ax.get_ylabel())):
                if label or not _categorical(axis):
                    if not label and axis is ax.yaxis and ax.get_shared_y_axes().get_siblings(ax) != [ax]:
                        continue  # a shared y axis is labelled on the first panel
                    assert style.has_unit(label), f"{stored.stem}: axis label {label!r}"


def test_stored_results_name_their_command():
    for stored in STORED:
        data = load_stored(stored)
        assert data["experiment"] == stored.stem
        assert data["command"] == f"fabricopt reproduce {stored.stem} --quick"


def test_gallery_shows_every_stored_result_with_its_command():
    text = GALLERY.read_text()
    for stored in STORED:
        data = load_stored(stored)
        assert data["command"] in text, stored.stem
    for image in re.findall(r"\.\. image:: (\S+)", text):
        assert (GALLERY.parent / image).is_file(), image
    shown = set(re.findall(r"\.\. image:: _static/gallery/(\S+)\.png", text))
    assert shown == {p.stem for p in (ROOT / "docs" / "_static" / "gallery").glob("*.png")}
