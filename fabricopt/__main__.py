"""``python -m fabricopt`` runs the command-line interface."""

import sys

from fabricopt.cli import main

sys.exit(main())
