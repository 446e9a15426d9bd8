"""The one tolerance that certifies ``optimal`` and bounds, and the solver tolerances
that make MILP proofs meet it.

Every figure fabricopt certifies is relative: models and scorers work in units
normalized per instance (times by the largest time, bytes by the largest demand), so a
relative tolerance means the same at every scale of the input and no absolute slack
(which would swallow a whole objective of 1e-12 s) is ever added.

- :data:`CERTIFY_RTOL`: a method's proof of optimality holds when its bound and the
  objective ``problems.evaluate`` re-scores agree to this; a bound that passes the
  objective by more than this is wrong. docs/envelope.rst states it.
- :data:`CROSS_RTOL`: twice that, the slack when one run's answer is held against
  another's (``bench.claims``, ``testing.check_method``, the contract experiment).
- :data:`FEASIBILITY_RTOL`: what ``check`` allows on sums and times (not a certificate).
- :data:`LP_BOUND_SAFETY_RTOL`: what an LP relaxation's bound gives up to stay valid.
- :data:`SOLVER_FEASIBILITY_TOL`: the primal and dual feasibility tolerances HiGHS is
  given, on models whose coefficients are near 1, so its optimum is within
  :data:`CERTIFY_RTOL` of the re-scored one. CBC gets it too, with its
  integer preprocessing off (:mod:`fabricopt.milp.cbc`); its continuous columns are
  re-solved by HiGHS with its integers fixed (:mod:`fabricopt.milp.run`).
- :data:`SOLVER_GAP_TOL`: the smallest improvement a solver's search must still see
  (HiGHS's MIP feasibility tolerance, by which it prunes and stops; CBC's cutoff
  increment), strictly below :data:`CERTIFY_RTOL` so that a proven optimum's bound
  lands inside the certificate.
"""

from __future__ import annotations

__all__ = ["CERTIFY_RTOL", "CROSS_RTOL", "FEASIBILITY_RTOL", "LP_BOUND_SAFETY_RTOL",
           "SOLVER_FEASIBILITY_TOL", "SOLVER_GAP_TOL", "agree", "overshoot"]

#: Relative tolerance of every ``optimal`` certificate and every bound.
CERTIFY_RTOL = 1e-9

#: Two figures each certified to :data:`CERTIFY_RTOL` (two proven optima, a bound and a
#: checked objective of another run) may differ by twice it; beyond, one claim is false.
CROSS_RTOL = 2 * CERTIFY_RTOL

#: ``check`` accepts sums (ring shares, path fractions) and start times that meet their
#: targets to this, relative (docs/formats.rst, *Tolerance*): feasibility, not optimality.
FEASIBILITY_RTOL = 1e-9

#: A bound read from an LP relaxation (solved at :data:`SOLVER_FEASIBILITY_TOL`) is
#: lowered by this much, relative, so that the LP's error never lifts it above a true
#: optimum: such a bound only bounds; a proof of optimality comes from the MILP.
LP_BOUND_SAFETY_RTOL = 1e-7

#: Feasibility tolerances given to HiGHS (primal, dual) and CBC (primal, dual, integrality).
SOLVER_FEASIBILITY_TOL = 1e-9

#: The smallest improvement a solver's search must still see, on objectives scaled near 1
#: (HiGHS's MIP feasibility tolerance, CBC's cutoff increment): strictly below
#: :data:`CERTIFY_RTOL`, so that what the search cannot tell apart is within the certificate.
SOLVER_GAP_TOL = 1e-10


def agree(a: float, b: float, rtol: float = CERTIFY_RTOL) -> bool:
    """Do ``a`` and ``b`` agree to ``rtol`` relative to the larger magnitude?

    Scale-free: ``agree(a, b)`` equals ``agree(s * a, s * b)`` for every ``s > 0``
    (up to floating-point rounding), and 0 agrees only with 0.

    Examples
    --------
    >>> agree(1.0, 1.0 + 1e-10), agree(1e-12, 1.0000000001e-12), agree(1e-12, 2e-12)
    (True, True, False)
    >>> agree(0.0, 0.0), agree(0.0, 1e-300)
    (True, False)
    """
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def overshoot(sense: str, bound: float, objective: float, rtol: float = CERTIFY_RTOL) -> bool:
    """Is ``bound`` on the wrong side of ``objective`` by more than ``rtol`` relative?

    Parameters
    ----------
    sense : {"min", "max"}
        A lower bound of a minimization may not exceed the objective; an upper bound of
        a maximization may not fall below it.
    bound, objective : float

    Examples
    --------
    >>> overshoot("min", 2.0, 1.0), overshoot("min", 1.0 + 1e-12, 1.0), overshoot("max", 0.5, 1.0)
    (True, False, True)
    """
    over = (bound - objective) if sense == "min" else (objective - bound)
    return over > rtol * max(abs(objective), abs(bound))
