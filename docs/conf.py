"""Sphinx configuration of the fabricopt documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are errors).
The method table, the CLI reference and the JSON Schemas are generated from the code
at build time (``_ext/fabricopt_docs.py``), so they cannot drift from it.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # document this checkout, installed or not
os.environ.setdefault("MPLBACKEND", "Agg")

import fabricopt  # noqa: E402

project = "fabricopt"
author = "the fabricopt authors"
copyright = "the fabricopt authors, Apache-2.0"
release = version = fabricopt.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "fabricopt_docs",
]

exclude_patterns = ["_build", "gallery_results"]
root_doc = "index"
nitpicky = False

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"  # types from the annotations; numpydoc sections add the words
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_attributes_as_param_list = True

html_theme = "pydata_sphinx_theme"
html_title = f"fabricopt {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []

# numpydoc References sections list papers without citing them inline ("[1]_"), which
# docutils reports as unreferenced citations; that is the docstring convention here.
suppress_warnings = ["ref.citation"]
