"""Test configuration: hypothesis profiles chosen by ``FABRICOPT_HYPOTHESIS_PROFILE``.

``ci`` is derandomized (the same examples on every run, as scipy's CI does); ``random``
draws new examples on every run, as many as ``ci``, and prints the blob that replays a
failure (run it beside ``ci``: it finds what a fixed set of examples hides); ``dev``
(the default) explores randomly; ``thorough`` runs many more examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("random", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("dev", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("FABRICOPT_HYPOTHESIS_PROFILE", "dev"))
