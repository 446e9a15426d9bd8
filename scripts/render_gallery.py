"""Draw the documentation gallery's figures from the stored results the repository ships.

    python scripts/render_gallery.py                       # every docs/gallery_results/*.json
    python scripts/render_gallery.py --store topoopt reproduce-results/topoopt-quick

``--store NAME FOLDER`` first replaces ``docs/gallery_results/NAME.json`` with the runs of
``fabricopt reproduce NAME --quick --out FOLDER``. The figures go to
``docs/_static/gallery/`` (PNG only: the documentation shows them; the experiments also
write a PDF next to each PNG in their results folder).
"""

import argparse
import shutil
import tempfile
from pathlib import Path

from fabricopt.bench.gallery import render_stored, store_result

DOCS = Path(__file__).resolve().parents[1] / "docs"
RESULTS = DOCS / "gallery_results"
IMAGES = DOCS / "_static" / "gallery"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", nargs=2, metavar=("NAME", "FOLDER"),
                        help="store the quick runs of experiment NAME from results FOLDER")
    args = parser.parse_args()
    if args.store:
        name, folder = args.store
        print("wrote", store_result(name, folder, RESULTS / f"{name}.json"))
    IMAGES.mkdir(parents=True, exist_ok=True)
    for stored in sorted(RESULTS.glob("*.json")):
        with tempfile.TemporaryDirectory() as tmp:
            _, figures = render_stored(stored, tmp)
            for png in figures:
                shutil.copyfile(png, IMAGES / png.name)
                print("wrote", IMAGES / png.name)


if __name__ == "__main__":
    main()
