"""Every built-in method of every kind passes ``check_method``: a valid envelope,
the same answer for the same seed, never better than an exact method's proven optimum.

Parametrized over the registry, so each new kind's methods are covered as they land;
derandomized in CI by the ``ci`` hypothesis profile. Kept fast: a few small instances
per method, time limits on the method and on the exact references.
"""

import pytest

from fabricopt.methods import all_methods
from fabricopt.testing import check_method

BUILTIN = [(m.kind, m.name) for m in all_methods() if m.source == "builtin"]


@pytest.mark.parametrize("kind, name", BUILTIN, ids=[f"{k}/{n}" for k, n in BUILTIN])
def test_builtin_method_passes_check_method(kind, name):
    check_method(kind, name, examples=10, time_limit=5.0, reference_time_limit=2.0)
