"""The exact models: one MILP (or LP) builder per problem kind, on :mod:`fabricopt.milp`'s sparse backend, and their MPS/LP export."""
