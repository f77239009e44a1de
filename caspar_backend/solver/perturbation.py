"""IPOPT's structural-degeneracy test of the KKT matrix (its PDPerturbationHandler).

Whether the Hessian block and the constraint Jacobian are *structurally* degenerate is
unknown at the start of a solve.  Each of the two is NOT_YET_DETERMINED, then
NOT_DEGENERATE or DEGENERATE for the rest of the solve:

* while either is undetermined, each iteration's matrix is a test: first factorized
  unperturbed; where it is singular, with ``delta_c`` (the Jacobian's test), then with
  ``delta_w`` instead, then with both (the order below);
* the test ends when the next matrix is considered or a wrong (not singular) inertia
  asks for ``delta_w``: a test matrix that needed nothing makes both NOT_DEGENERATE; one
  that needed ``delta_c`` only counts towards the Jacobian's degeneracy (DEGENERATE
  after ``DEGEN_ITERS_MAX`` such iterations), ``delta_w`` only towards the Hessian's,
  both towards both;
* a DEGENERATE Jacobian gets ``delta_c`` from every matrix's start, a DEGENERATE Hessian
  ``delta_w``; once both are decided a singular matrix gets ``delta_c`` for that matrix
  only (then ``delta_w`` as for a wrong inertia).

``always_cd`` (IPOPT's perturb_always_cd; caspar's condensed KKT system, which
regularizes every factorization): ``delta_c`` on every matrix, the Jacobian
NOT_DEGENERATE from the start.

This class holds the test's state and answers what to perturb; the inertia corrector
(:mod:`.inertia`) owns the values of ``delta_w`` and ``delta_c`` (the kernels keep the same
state in their IC state slots: ``compiled/kernels/kkt.py``).
"""

from __future__ import annotations

#: the states of the Hessian block and of the Jacobian
NOT_YET_DETERMINED, NOT_DEGENERATE, DEGENERATE = 0, 1, 2
#: the current test matrix's perturbations: none tested, none, delta_c, delta_w, both
NO_TEST, TEST_NONE, TEST_C, TEST_W, TEST_CW = 0, 1, 2, 3, 4
#: test iterations that needed a perturbation before it is taken as structural
DEGEN_ITERS_MAX = 3

#: what :meth:`DegeneracyTest.singular` asks for: delta_c (set / clear / keep) and
#: whether delta_w is raised
SET_C, CLEAR_C, KEEP_C = 1, -1, 0


class DegeneracyTest:
    """Final.  The state of one interior-point run (the restoration phase has its own):
    ``hess``, ``jac`` (NOT_YET_DETERMINED, NOT_DEGENERATE, DEGENERATE), ``iters`` (test
    iterations that needed a perturbation), ``test`` (the current matrix's test)."""

    def __init__(self, always_cd: bool = False):
        self.always_cd = bool(always_cd)
        self.hess = NOT_YET_DETERMINED
        self.jac = NOT_DEGENERATE if always_cd else NOT_YET_DETERMINED
        self.iters = 0
        self.test = NO_TEST

    def state(self) -> tuple:
        """``(hess, jac, iters, test)``: the state to carry over (a resumed solve)."""
        return self.hess, self.jac, self.iters, self.test

    def set_state(self, state) -> None:
        self.hess, self.jac, self.iters, self.test = (int(v) for v in state)

    def new_system(self) -> tuple:
        """A new matrix (IPOPT's ConsiderNewSystem): the last test ends, the next
        starts while either block is undetermined.  Returns ``(with_delta_c,
        with_delta_w)``: whether this matrix starts with delta_c (a degenerate Jacobian,
        or ``always_cd``) and with delta_w (a degenerate Hessian)."""
        self.finalize()
        undecided = NOT_YET_DETERMINED in (self.hess, self.jac)
        self.test = (TEST_C if self.always_cd else TEST_NONE) if undecided else NO_TEST
        return self.jac == DEGENERATE or self.always_cd, self.hess == DEGENERATE

    def singular(self, with_delta_c: bool) -> tuple:
        """A singular matrix (IPOPT's PerturbForSingularity) that carries delta_c or not:
        ``(c, raise_w)``, ``c`` one of SET_C, CLEAR_C, KEEP_C."""
        if NOT_YET_DETERMINED in (self.hess, self.jac):
            t = self.test
            if t == TEST_NONE:
                if self.jac == NOT_YET_DETERMINED:
                    self.test = TEST_C
                    return SET_C, False
                self.test = TEST_W
                return KEEP_C, True
            if t == TEST_C:
                if self.always_cd:
                    self.test = TEST_CW
                    return KEEP_C, True
                self.test = TEST_W
                return CLEAR_C, True
            if t == TEST_W:
                self.test = TEST_CW
                return SET_C, True
            return KEEP_C, True
        if with_delta_c:
            return KEEP_C, True
        return SET_C, False

    def wrong_inertia(self) -> None:
        """A nonsingular matrix of the wrong inertia (IPOPT's PerturbForWrongInertia):
        the test matrix did not need its perturbation for singularity, so it ends."""
        self.finalize()

    def delta_w_exhausted(self) -> None:
        """delta_w passed its maximum without delta_c: delta_c is tried instead, no
        test any more for this matrix, a degenerate Hessian undetermined again."""
        self.test = NO_TEST
        if self.hess == DEGENERATE:
            self.hess = NOT_YET_DETERMINED

    def finalize(self) -> None:
        """Conclude from the current test (IPOPT's finalize_test; as there the test stays
        current until the next matrix, and a second wrong inertia concludes again)."""
        t, nyd = self.test, NOT_YET_DETERMINED
        if t == TEST_NONE:
            if self.hess == nyd and self.jac == nyd:
                self.hess = self.jac = NOT_DEGENERATE
            elif self.hess == nyd:
                self.hess = NOT_DEGENERATE
            elif self.jac == nyd:
                self.jac = NOT_DEGENERATE
        elif t == TEST_C:
            if self.hess == nyd:
                self.hess = NOT_DEGENERATE
            if self.jac == nyd:
                self.iters += 1
                if self.iters >= DEGEN_ITERS_MAX:
                    self.jac = DEGENERATE
        elif t == TEST_W:
            if self.jac == nyd:
                self.jac = NOT_DEGENERATE
            if self.hess == nyd:
                self.iters += 1
                if self.iters >= DEGEN_ITERS_MAX:
                    self.hess = DEGENERATE
        elif t == TEST_CW:
            self.iters += 1
            if self.iters >= DEGEN_ITERS_MAX:
                self.hess = self.jac = DEGENERATE
