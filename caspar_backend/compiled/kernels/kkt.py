"""The augmented KKT system of batch/kkt.py for one instance: assembly with the static
regularization terms, solve with iterative refinement, and Algorithm IC (inertia
correction).
"""
import math

from .constants import (DEGENERATE, NO_TEST, NOT_YET_DETERMINED, PIVOTING_SWITCH_DELTA_W,
                        RESIDUAL_RATIO_SINGULAR, SLOW_REFINEMENT_EPS_FLOOR,
                        STATIC_REGULARIZATION_DECREASE, STATIC_REGULARIZATION_MAX,
                        STATIC_REGULARIZATION_MIN, TEST_NONE)
from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import amax_abs, nmax, nmin
from .bunch_kaufman import bk_factor, bk_solve
from .perturbation import _deg_finalize, _deg_singular, _next_delta_w
from .ldl_parts import ldl_factor_shared, ldl_solve_shared
from .refine_parts import NORMS_NONE, NORMS_RX, NORMS_RXB, refine_residual, refine_update


@kernel
def k_factor(Fb, FO, Ib, IO):
    """The factorization of K's values (slot F_K_VALUES), ``(n_pos, n_neg, n_zero)``:
    dense Bunch-Kaufman for a small K (size field SZ_DENSE_BK: :mod:`.bunch_kaufman`),
    else QDLDL's (:mod:`.qdldl`, its independent loops team jobs: :mod:`.ldl_parts`)."""
    if _i(Ib, IO, I_SIZES)[SZ_DENSE_BK] != 0:
        return bk_factor(Fb, FO, Ib, IO, _f(Fb, FO, F_K_VALUES))
    return ldl_factor_shared(Fb, FO, Ib, IO)


@kernel
def k_solve(Fb, FO, Ib, IO, b_slot, x_slot):
    """x = K^{-1} b through :func:`k_factor`'s factors (b, x float slots ``b_slot``,
    ``x_slot``)."""
    if _i(Ib, IO, I_SIZES)[SZ_DENSE_BK] != 0:
        bk_solve(Fb, FO, Ib, IO, _f(Fb, FO, b_slot), _f(Fb, FO, x_slot))
    else:
        ldl_solve_shared(Fb, FO, Ib, IO, b_slot, x_slot)


@kernel
def static_term_option(O, SI):
    """The static term a solve starts with (AugmentedKKT's eps): none where K is
    factorized with pivoting (SZ_DENSE_BK, as IPOPT's MUMPS) unless the user set one."""
    if SI[SZ_DENSE_BK] != 0:
        return O[OPT_KKT_STATIC_REGULARIZATION_PIVOTING]
    return O[OPT_KKT_STATIC_REGULARIZATION]


@kernel
def kkt_build(Fb, FO, Ib, IO, O, eps, delta_w, delta_c):
    """batch/kkt.py build: the KKT values (slot F_K_VALUES, the pattern's entry order)
    and the static terms (F_K_STATIC) of the Jacobian F_JV, the Hessian F_HV and the
    barrier diagonal F_SIGMA, for the static regularization ``eps`` and the
    regularizations delta_w, delta_c: :func:`kkt_build_one` (in the CUDA build's team
    launch, :func:`.kkt_parts.kkt_build_part` on the instance's team: :mod:`.team`)."""
    kkt_build_one(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)


@kernel
def kkt_build_one(Fb, FO, Ib, IO, O, eps, delta_w, delta_c):
    """:func:`kkt_build` on one thread: each sum as a scatter ``t[idx[k]] += v_k`` in
    one pass over its terms (:func:`.kkt_parts.kkt_build_part`'s sums, in the same
    order: the same bits, the faster schedule for one thread)."""
    JV, HV, sigma = _f(Fb, FO, F_JV), _f(Fb, FO, F_HV), _f(Fb, FO, F_SIGMA)
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nh, nj = SI[SZ_NW], SI[SZ_M], SI[SZ_NH], SI[SZ_NJ]
    values = _f(Fb, FO, F_K_VALUES)
    dstat = _f(Fb, FO, F_K_STATIC)
    src = _f(Fb, FO, F_K_SOURCE)
    ew = _f(Fb, FO, F_EW)
    ec = _f(Fb, FO, F_EC)
    csq = _f(Fb, FO, F_COL_SQ)
    priv = _f(Fb, FO, F_PRIV_SUM)
    jr = _i(Ib, IO, I_JAC_ROWS)
    hoff = _i(Ib, IO, I_HESS_OFFDIAG)
    cidx = _i(Ib, IO, I_COL_SQ_IDX)
    kmap = _i(Ib, IO, I_KKT_MAP)
    # primal static term ew_j = eps min(1, |K_j|_2) while delta_w = 0
    for j in range(nw):
        ew[j] = 0.0
    if eps != 0.0 and delta_w == 0.0:
        q = U(0)
        for k in range(nh):
            csq[q] = HV[k] * HV[k]
            q += U(1)
        for k in range(hoff.shape[0]):
            h = HV[U(hoff[k])]
            csq[q] = h * h
            q += U(1)
        for k in range(nj):
            csq[q] = JV[k] * JV[k]
            q += U(1)
        for k in range(nw):
            csq[q] = sigma[k] * sigma[k]
            q += U(1)
        for kq in range(q):
            ew[U(cidx[kq])] += csq[kq]
        for j in range(nw):
            ew[j] = nmin(math.sqrt(ew[j]), 1.0) * eps
    for i in range(m):
        ec[i] = 0.0
    if eps != 0.0:
        for k in range(nj):
            ec[U(jr[k])] += JV[k] * JV[k]
        for i in range(m):
            ec[i] = nmin(ec[i], 1.0) * eps
        if delta_c == 0.0:
            pe = _i(Ib, IO, I_PRIV_ENTRY)
            pc = _i(Ib, IO, I_PRIV_COL)
            pr = _i(Ib, IO, I_PRIV_ROW)
            pn = _f(Fb, FO, F_PRIV_NONE)
            for i in range(m):
                priv[i] = 0.0
            for k in range(pe.shape[0]):
                v = JV[U(pe[k])]
                v = v * v
                d = sigma[U(pc[k])] + delta_w
                d = nmax(d, 1e-30)
                priv[U(pr[k])] += v / d
            for i in range(m):
                ec[i] = nmin(ec[i], priv[i] * O[OPT_PRIVATE_PIVOT_FRACTION] + pn[i])
    for i in range(m):
        ec[i] = nmax(ec[i] - delta_c, 0.0)
    for j in range(nw):
        dstat[j] = ew[j]
    for i in range(m):
        dstat[nw + i] = ec[i] * -1.0
    # src = [hess, Sigma + delta_w + ew, jac, -ec - delta_c], summed in input order
    q = U(0)
    for k in range(nh):
        src[q] = HV[k]
        q += U(1)
    for j in range(nw):
        src[q] = (sigma[j] + delta_w) + ew[j]
        q += U(1)
    for k in range(nj):
        src[q] = JV[k]
        q += U(1)
    for i in range(m):
        src[q] = ec[i] * -1.0 - delta_c
        q += U(1)
    nnz = SI[SZ_NNZK]
    for k in range(nnz):
        values[k] = 0.0
    for kq in range(q):
        values[U(kmap[kq])] += src[kq]


@kernel
def kkt_matvec(Fb, FO, Ib, IO):
    """K x: slot F_KKT_SOL times K (values F_K_VALUES) into F_KKT_KX, F_KKT_LOWER
    scratch: :func:`kkt_matvec_one` (in the CUDA build's team launch,
    :func:`.kkt_parts.kkt_matvec_part` on the instance's team: :mod:`.team`)."""
    kkt_matvec_one(Fb, FO, Ib, IO)


@kernel
def kkt_matvec_one(Fb, FO, Ib, IO):
    """(U + U^T - D) x as scipy's csc_matvec + csr_matvec (QDLDLSolver.matvec), both in
    one pass over U's columns: ``out`` (U x) accumulates each row over the columns in
    order as csc_matvec does, ``lo[j]`` (U^T x) sums column j in order as csr_matvec
    does, so every sum is the same as theirs -- and as
    :func:`.kkt_parts.kkt_matvec_part`'s -- bit for bit."""
    values, x = _f(Fb, FO, F_K_VALUES), _f(Fb, FO, F_KKT_SOL)
    out, lo = _f(Fb, FO, F_KKT_KX), _f(Fb, FO, F_KKT_LOWER)
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    Kp, Ki, dpos = _i(Ib, IO, I_K_INDPTR), _i(Ib, IO, I_K_INDICES), _i(Ib, IO, I_K_DIAG_POS)
    for i in range(n):
        out[i] = 0.0
    for j in range(n):
        xj = x[j]
        s = 0.0
        for p in range(U(Kp[j]), U(Kp[j + 1])):
            i = U(Ki[p])
            v = values[p]
            out[i] += v * xj
            s += v * x[i]
        lo[j] = s
    for i in range(n):
        out[i] = (out[i] + lo[i]) - values[U(dpos[i])] * x[i]


@kernel
def kkt_solve(Fb, FO, Ib, IO, O, rhs_w, rhs_c, dw, dy):
    """batch/kkt.py solve for one instance: refined against K; returns (ratio, rho)."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m = SI[SZ_NW], SI[SZ_M]
    b = _f(Fb, FO, F_KKT_RHS)
    x = _f(Fb, FO, F_KKT_SOL)
    for i in range(nw):
        b[i] = rhs_w[i]
    for i in range(m):
        b[nw + i] = rhs_c[i]
    k_solve(Fb, FO, Ib, IO, F_KKT_RHS, F_KKT_SOL)
    steps = int(O[OPT_MAX_REFINEMENT_STEPS])
    ratio = 0.0
    rho = 0.0
    if steps > 0:
        go = True
        converged = False
        bnorm = -1.0
        rn = 0.0
        for step in range(steps + 1):
            kkt_matvec(Fb, FO, Ib, IO)
            # the residual, and from the second step its max-norms (b's once)
            norms = NORMS_NONE if step == 0 else (NORMS_RXB if bnorm < 0.0 else NORMS_RX)
            rn_new, xn, bn = refine_residual(Fb, FO, Ib, IO, norms)
            if step == 0:
                k_solve(Fb, FO, Ib, IO, F_KKT_RES, F_KKT_CORR)
                refine_update(Fb, FO, Ib, IO)
                continue
            if bnorm < 0.0:
                bnorm = bn
            elif go:
                rho = rn_new / rn if rn > 0.0 else 0.0
            if go:
                rn = rn_new
                ratio = rn / ((1.0 + bnorm) + nmin(xn, 1e6 * bnorm))
            finite = math.isfinite(ratio)
            conv = go and finite and ratio <= O[OPT_RESIDUAL_RATIO_MAX]
            if conv:
                converged = True
            go = go and finite and not conv
            if step == steps or not go:
                break
            k_solve(Fb, FO, Ib, IO, F_KKT_RES, F_KKT_CORR)
            refine_update(Fb, FO, Ib, IO)
        if static_term_option(O, SI) > 0.0 and not converged:
            ratio = rn / bnorm if bnorm > 0.0 else 0.0
    for i in range(nw):
        dw[i] = x[i]
    for i in range(m):
        dy[i] = x[nw + i]
    return ratio, rho




@kernel
def _constraint_block_negative(Fb, FO, Ib, IO):
    """AugmentedKKT.constraint_block_negative: every constraint row's diagonal of the
    factorized values (slot F_K_VALUES) is negative."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m = SI[SZ_NW], SI[SZ_M]
    values, dpos = _f(Fb, FO, F_K_VALUES), _i(Ib, IO, I_K_DIAG_POS)
    for i in range(m):
        if not values[U(dpos[nw + i])] < 0.0:
            return False
    return m > 0


@kernel
def _factor_inertia(Fb, FO, Ib, IO, O, eps, delta_w, delta_c):
    """Build K with these terms and factorize it: whether its inertia is (nw, m, 0),
    its numbers of zero pivots and of negative eigenvalues."""
    SI = _i(Ib, IO, I_SIZES)
    kkt_build(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)
    npos, nneg, nzero = k_factor(Fb, FO, Ib, IO)
    return nzero == 0 and npos == SI[SZ_NW] and nneg == SI[SZ_M], nzero, nneg


@kernel
def factorize_ic(Fb, FO, Ib, IO, O, mu, st):
    """InertiaCorrector.regularize_and_factorize (solver/inertia.py) for the kernels'
    paths, with the state ``st`` (slot F_IC_STATE, entries IC_* of :mod:`.slots`, the
    degeneracy test's as solver/perturbation.py's DegeneracyTest); returns 0 or -reason
    (batch/state.py's EJECT_REASONS: the pivoting switch, no regularization).  The
    factorization's delta_w and delta_c are left in st[IC_DW], st[IC_DC].

    A new matrix: delta_c from the start where the Jacobian is degenerate, delta_w where
    the Hessian is.  A zero pivot of the first factorization raises eps tenfold (up to
    STATIC_REGULARIZATION_MAX) for this iteration while the pivot stays zero (the eps
    before it kept in st[IC_EPS_RESTORE] for the next iteration); then the perturbations
    of the degeneracy test and Algorithm IC."""
    SI = _i(Ib, IO, I_SIZES)
    m = SI[SZ_M]
    dense = SI[SZ_DENSE_BK] != 0
    eps = st[IC_EPS]
    dc = O[OPT_JACOBIAN_REGULARIZATION_VALUE] * mu ** O[OPT_JACOBIAN_REGULARIZATION_EXPONENT]
    # DegeneracyTest.new_system
    _deg_finalize(st)
    if st[IC_HESS_DEG] == NOT_YET_DETERMINED or st[IC_JAC_DEG] == NOT_YET_DETERMINED:
        st[IC_TEST] = TEST_NONE
    else:
        st[IC_TEST] = NO_TEST
    delta_c = dc if st[IC_JAC_DEG] == DEGENERATE else 0.0
    delta_w = 0.0
    if st[IC_HESS_DEG] == DEGENERATE:
        delta_w, good = _next_delta_w(O, st, delta_w)
        if not good:
            return -5
    st[IC_DW] = delta_w
    st[IC_DC] = delta_c
    ok, nzero, nneg = _factor_inertia(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)
    # a zero pivot of a factorization without pivoting need not mean a singular K: a
    # larger static term for this iteration first (AugmentedKKT.increase_quality)
    while (not ok) and nzero > 0 and 0.0 < eps < STATIC_REGULARIZATION_MAX:
        if st[IC_EPS_RESTORE] < 0.0:
            st[IC_EPS_RESTORE] = eps
        eps = min(10.0 * eps, STATIC_REGULARIZATION_MAX)
        st[IC_EPS] = eps
        ok, nzero, nneg = _factor_inertia(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)
    while not ok:
        zp = nzero > 0
        # where the general path may switch to its factorization's pivoting mode (not a
        # small K's, which pivots already): hand over whatever N (whether that mode
        # exists depends on N and on MKL being installed, which a cached kernel cannot
        # know; without it the general path goes on as below, and the hand-over costs
        # only the restart)
        if (not dense) and ((zp and delta_w > 0.0 and delta_c > 0.0)
                            or (delta_w > PIVOTING_SWITCH_DELTA_W
                                and not (zp and delta_c == 0.0))
                            or ((not zp) and nneg < m
                                and _constraint_block_negative(Fb, FO, Ib, IO))):
            return -4
        # InertiaCorrector._perturb: singular (a zero pivot, or with exact inertia too
        # few negative eigenvalues), else a wrong inertia
        if (zp or (dense and nneg < m)) and m > 0:
            c, raise_w = _deg_singular(st, delta_c > 0.0)
            if c == 1:
                delta_c = dc
            elif c == -1:
                delta_c = 0.0
            if raise_w:
                delta_w, good = _next_delta_w(O, st, delta_w)
                if not good:
                    return -5
        else:
            _deg_finalize(st)
            delta_w, good = _next_delta_w(O, st, delta_w)
            if not good:
                if delta_c != 0.0:
                    return -5
                # delta_w exhausted without delta_c: delta_c, delta_w again from its start
                delta_c = dc
                st[IC_TEST] = NO_TEST
                if st[IC_HESS_DEG] == DEGENERATE:
                    st[IC_HESS_DEG] = NOT_YET_DETERMINED
                delta_w, good = _next_delta_w(O, st, 0.0)
                if not good:
                    return -5
        st[IC_DW] = delta_w
        st[IC_DC] = delta_c
        ok, nzero, nneg = _factor_inertia(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)
    if delta_w > 0.0:
        st[IC_DW_LAST] = delta_w
    return 0


@kernel
def _smaller_static_term(Fb, FO, Ib, IO, O, st, rhs_w, rhs_c, dw, dy, dw2, dy2,
                         max_contraction):
    """InertiaCorrector._solve_with_smaller_static_term: the same K (delta_w, delta_c)
    with eps / STATIC_REGULARIZATION_DECREASE (not below STATIC_REGULARIZATION_MIN),
    solved into (dw2, dy2).  Kept (copied into dw, dy; eps stays lowered) when the
    inertia is right, the refinement converges and, with ``max_contraction`` >= 0, it
    contracts by at most that; otherwise eps and its factorization are restored.
    Returns whether it was kept."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m = SI[SZ_NW], SI[SZ_M]
    eps = st[IC_EPS]
    if eps <= STATIC_REGULARIZATION_MIN:
        return False
    st[IC_EPS] = max(eps / STATIC_REGULARIZATION_DECREASE, STATIC_REGULARIZATION_MIN)
    ok, _, _ = _factor_inertia(Fb, FO, Ib, IO, O, st[IC_EPS], st[IC_DW], st[IC_DC])
    if ok:
        ratio, rho = kkt_solve(Fb, FO, Ib, IO, O, rhs_w, rhs_c, dw2, dy2)
        if ratio <= RESIDUAL_RATIO_SINGULAR and (max_contraction < 0.0 or rho <= max_contraction):
            for i in range(nw):
                dw[i] = dw2[i]
            for i in range(m):
                dy[i] = dy2[i]
            return True
    st[IC_EPS] = eps
    _factor_inertia(Fb, FO, Ib, IO, O, eps, st[IC_DW], st[IC_DC])
    return False


@kernel
def _redo_direction(Fb, FO, Ib, IO, O, mu, st, rhs_w, rhs_c, dw, dy):
    """Algorithm IC again with the static term now in ``st`` and the solve into dw, dy:
    ``(0, residual ratio)``, or ``(-reason, nan)`` (factorize_ic's reasons; -6 for a
    non-finite residual)."""
    r = factorize_ic(Fb, FO, Ib, IO, O, mu, st)
    if r < 0:
        return r, math.nan
    ratio, _ = kkt_solve(Fb, FO, Ib, IO, O, rhs_w, rhs_c, dw, dy)
    if not math.isfinite(ratio):
        return -6, math.nan
    return 0, ratio


@kernel
def direction_fallbacks(Fb, FO, Ib, IO, O, mu, st, rhs_w, rhs_c, dw, dy, dw2, dy2, ratio,
                        rho):
    """The rest of InertiaCorrector.direction after the first factorization and solve
    (``ratio``, ``rho`` its refinement's residual ratio and contraction; dw, dy its
    solution): a slow refinement's smaller static term, then, while the refinement
    fails, once a smaller static term and a larger one for the rest of the solve with
    Algorithm IC again.  (dw2, dy2) is scratch.  Returns 0 with the direction in dw, dy,
    or -reason: -6 where the general path goes on to its pivoting or accurate
    factorizations, or a non-finite residual; factorize_ic's reasons."""
    smaller_tried = False
    if (rho > O[OPT_REFINEMENT_CONTRACTION_MAX] and st[IC_EPS] > SLOW_REFINEMENT_EPS_FLOOR
            and ratio <= RESIDUAL_RATIO_SINGULAR and st[IC_EPS_RESTORE] < 0.0
            and st[IC_SLOW_OFF] == 0.0):
        # converged, but slowly: the same matrix with a smaller static term
        smaller_tried = True
        eps = st[IC_EPS]
        if _smaller_static_term(Fb, FO, Ib, IO, O, st, rhs_w, rhs_c, dw, dy,
                                dw2, dy2, O[OPT_REFINEMENT_CONTRACTION_MAX]):
            ratio = 0.0         # (converged: below RESIDUAL_RATIO_SINGULAR)
            if st[IC_EPS_BEFORE_SLOW] < 0.0:
                st[IC_EPS_BEFORE_SLOW] = eps
    if not math.isfinite(ratio):
        return -6
    if (ratio > RESIDUAL_RATIO_SINGULAR and st[IC_EPS_BEFORE_SLOW] >= 0.0
            and st[IC_EPS] < st[IC_EPS_BEFORE_SLOW]):
        # a refinement failing under the term a slow one lowered: back to the former
        # term, and no more lowering for slowness
        st[IC_EPS] = st[IC_EPS_BEFORE_SLOW]
        st[IC_EPS_BEFORE_SLOW] = -1.0
        st[IC_SLOW_OFF] = 1.0
        r, ratio = _redo_direction(Fb, FO, Ib, IO, O, mu, st, rhs_w, rhs_c, dw, dy)
        if r < 0:
            return r
    while ratio > RESIDUAL_RATIO_SINGULAR:
        if (not smaller_tried) and st[IC_EPS_RESTORE] < 0.0:
            smaller_tried = True
            if _smaller_static_term(Fb, FO, Ib, IO, O, st, rhs_w, rhs_c, dw,
                                    dy, dw2, dy2, -1.0):
                break
        eps = st[IC_EPS]
        if not (0.0 < eps < STATIC_REGULARIZATION_MAX):
            return -6       # the general path's pivoting / accurate factorizations
        # a larger static term for the rest of the solve (increase_quality), IC again
        st[IC_EPS] = min(10.0 * eps, STATIC_REGULARIZATION_MAX)
        st[IC_EPS_RESTORE] = -1.0
        r, ratio = _redo_direction(Fb, FO, Ib, IO, O, mu, st, rhs_w, rhs_c, dw, dy)
        if r < 0:
            return r
    return 0


@kernel
def least_squares_y(Fb, FO, Ib, IO, O, G, ZL, ZU, tmp, Y, eps, limit):
    """IPOPT's least-squares constraint multipliers (solver/initial.py): the augmented
    system with static term ``eps``, delta_w = 1 and delta_c = 0 solved for y against
    the dual residual with the Hessian zero; kept in ``Y`` when the system factorizes
    with the right inertia and y is finite and at most ``limit`` (the start:
    constr_mult_init_max), else Y = 0 (IPOPT's: a singular system gives y = 0).  Returns
    whether the system factorized (IPOPT's CalculateMultipliers' value).  The Jacobian
    is slot F_JV; slots F_HV and F_SIGMA (K's Hessian and barrier diagonal) and ``tmp``
    are overwritten."""
    SI = _i(Ib, IO, I_SIZES)
    HV, sigma = _f(Fb, FO, F_HV), _f(Fb, FO, F_SIGMA)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    iL = _i(Ib, IO, I_LOWER_IDX)
    iU = _i(Ib, IO, I_UPPER_IDX)
    rd = _f(Fb, FO, F_DUAL_RES)
    for i in range(nw):
        rd[i] = G[i]
    for k in range(nL):
        rd[U(iL[k])] -= ZL[k]
    for k in range(nU):
        rd[U(iU[k])] += ZU[k]
    for k in range(SI[SZ_NH]):
        HV[k] = 0.0
    for i in range(nw):
        sigma[i] = 0.0
        rd[i] = -rd[i]
    for i in range(m):
        tmp[i] = 0.0
    y = _f(Fb, FO, F_DY)
    for i in range(m):
        y[i] = 0.0
    ok, _, _ = _factor_inertia(Fb, FO, Ib, IO, O, eps, 1.0, 0.0)
    if ok:
        kkt_solve(Fb, FO, Ib, IO, O, rd, tmp, _f(Fb, FO, F_DW), y)
    ymax = amax_abs(y, m)
    keep = math.isfinite(ymax) and ymax <= limit
    for i in range(m):
        Y[i] = y[i] if keep else 0.0
    return ok
