"""IPOPT's perturbation rules on a solve's inertia-correction state (slot F_IC_STATE,
entries IC_* of :mod:`.slots`): the structural-degeneracy test of
:class:`caspar_backend.solver.perturbation.DegeneracyTest` and the delta_w schedule of
:meth:`caspar_backend.solver.inertia.InertiaCorrector._next_delta_w`, operation for
operation (:func:`.kkt.factorize_ic` runs them)."""
from ._jit import kernel
from .constants import (DEGEN_ITERS_MAX, DEGENERATE, NOT_DEGENERATE, NOT_YET_DETERMINED,
                        TEST_C, TEST_CW, TEST_NONE, TEST_W)
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)


@kernel
def _deg_finalize(st):
    """DegeneracyTest.finalize (solver/perturbation.py) on the IC state ``st``."""
    t = st[IC_TEST]
    h, j = st[IC_HESS_DEG], st[IC_JAC_DEG]
    if t == TEST_NONE:
        if h == NOT_YET_DETERMINED and j == NOT_YET_DETERMINED:
            st[IC_HESS_DEG] = NOT_DEGENERATE
            st[IC_JAC_DEG] = NOT_DEGENERATE
        elif h == NOT_YET_DETERMINED:
            st[IC_HESS_DEG] = NOT_DEGENERATE
        elif j == NOT_YET_DETERMINED:
            st[IC_JAC_DEG] = NOT_DEGENERATE
    elif t == TEST_C:
        if h == NOT_YET_DETERMINED:
            st[IC_HESS_DEG] = NOT_DEGENERATE
        if j == NOT_YET_DETERMINED:
            st[IC_DEGEN_ITERS] += 1.0
            if st[IC_DEGEN_ITERS] >= DEGEN_ITERS_MAX:
                st[IC_JAC_DEG] = DEGENERATE
    elif t == TEST_W:
        if j == NOT_YET_DETERMINED:
            st[IC_JAC_DEG] = NOT_DEGENERATE
        if h == NOT_YET_DETERMINED:
            st[IC_DEGEN_ITERS] += 1.0
            if st[IC_DEGEN_ITERS] >= DEGEN_ITERS_MAX:
                st[IC_HESS_DEG] = DEGENERATE
    elif t == TEST_CW:
        st[IC_DEGEN_ITERS] += 1.0
        if st[IC_DEGEN_ITERS] >= DEGEN_ITERS_MAX:
            st[IC_HESS_DEG] = DEGENERATE
            st[IC_JAC_DEG] = DEGENERATE


@kernel
def _deg_singular(st, with_c):
    """DegeneracyTest.singular: ``(c, raise_w)`` with c 1 (set delta_c), -1 (clear it)
    or 0 (keep it)."""
    if st[IC_HESS_DEG] == NOT_YET_DETERMINED or st[IC_JAC_DEG] == NOT_YET_DETERMINED:
        t = st[IC_TEST]
        if t == TEST_NONE:
            if st[IC_JAC_DEG] == NOT_YET_DETERMINED:
                st[IC_TEST] = TEST_C
                return 1, False
            st[IC_TEST] = TEST_W
            return 0, True
        if t == TEST_C:
            st[IC_TEST] = TEST_W
            return -1, True
        if t == TEST_W:
            st[IC_TEST] = TEST_CW
            return 1, True
        return 0, True
    if with_c:
        return 0, True
    return 1, False


@kernel
def _next_delta_w(O, st, delta_w):
    """InertiaCorrector._next_delta_w: ``(delta_w, ok)``; not ok past delta_w^max (the
    last delta_w then forgotten)."""
    dwl = st[IC_DW_LAST]
    if delta_w == 0.0:
        if dwl == 0.0:
            delta_w = O[OPT_FIRST_HESSIAN_PERTURBATION]
        else:
            delta_w = max(O[OPT_MIN_HESSIAN_PERTURBATION], O[OPT_PERTURB_DEC_FACT] * dwl)
    elif dwl == 0.0 or 1e5 * dwl < delta_w:
        delta_w = delta_w * O[OPT_PERTURB_INC_FACT_FIRST]
    else:
        delta_w = delta_w * O[OPT_PERTURB_INC_FACT]
    if delta_w > O[OPT_MAX_HESSIAN_PERTURBATION]:
        st[IC_DW_LAST] = 0.0
        return delta_w, False
    return delta_w, True
