"""Hand-written strategies, one module per problem kind.

``fabricopt.testing.instances(kind)`` imports ``fabricopt.testing.kinds.<kind>`` on
first use; the module registers its strategies with
:func:`fabricopt.testing.register_strategies`. A kind without a module here gets the
generic fallback built on its ``generate``. To add one for a new kind, copy
``circuits.py``: draw the instance field by field from small values (so that a
failure shrinks to a readable counterexample) and make it satisfy every rule of the
format by construction rather than by filtering.
"""
