"""Feasibility restoration phase (W&B 2006 sec. 3.3), solved by the same interior-point
method.

From the current iterate ``w_R`` with constraint residual ``c = h(w_R)``, the restoration
problem in variables ``v = [w (nw); p (m); n (m)]`` is

    min  rho sum(p + n) + zeta/2 sum_{i < nx} D_i^2 (w_i - w_R,i)^2
    s.t. h(w) - p + n = 0,   wL <= w <= wU,   p >= 0,   n >= 0,

with ``rho = resto_penalty_parameter``, ``zeta = sqrt(mu)`` at the restoration problem's
current barrier parameter mu (``mu_R`` at its start; :meth:`RestorationNLP.set_mu`),
``D_i = min(1, 1/|w_R,i|)`` and ``mu_R = max(mu, ||c||_inf)``.  It starts from ``w_R`` and the ``p, n`` that solve the
restoration barrier problem's optimality conditions for fixed ``w``:

    n = (mu_R - rho c)/(2 rho) + sqrt(((mu_R - rho c)/(2 rho))^2 + mu_R c/(2 rho)),  p = c + n.

Its Jacobian (COO) is the original one followed by ``-1`` at ``(i, nw + i)`` and ``+1`` at
``(i, nw + m + i)``; its Hessian (lower COO) is the original one (evaluated with objective
factor 0) followed by the diagonal ``zeta D^2`` on the x-block.  Its augmented KKT
system eliminates p and n (``elastic_pairs``; :mod:`caspar_backend.kkt.elastic`, IPOPT's
AugRestoSystemSolver): the factorized matrix has the original problem's structure.

From its second iteration on, the phase returns (IPOPT's RestoFilterConvergenceCheck) at
the first point whose max-norm infeasibility is at most max(kappa_resto ||c||_inf,
min(tol, constr_viol_tol)) (``kappa_resto = required_infeasibility_reduction``) and that
is acceptable to the original filter (augmented with the starting point) and to the
starting point itself (sufficient decrease in theta or in the barrier function).  If the
restoration problem itself converges while the original point is still infeasible, the
problem is locally infeasible.

A square problem (as many free variables as equality constraints, no other
constraints) is never left before it is solved (IPOPT's MinC_1NrmRestorationPhase and
RestoConvergenceCheck): ``kappa_resto = 0`` unless the user set it, and the phase
returns -- without the filter tests -- at the first point whose max-norm infeasibility is
at most min(tol, constr_viol_tol); if the restoration problem converges first at a point
whose unscaled violation is at most constr_viol_tol, the solve ends
``Feasible_Point_Found``.  With ``expect_infeasible_problem`` the first phase started
at theta > 1e-3 returns only at ``kappa_resto = 1e-3`` (unless the user set it).  The
phase's own barrier update is the solve's strategy (IPOPT's ``resto.mu_strategy``):
adaptive starts in free mode at mu_R, with mu_min 100 times the solve's.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import amax, amax_abs, errstate, scalars
from .linesearch import G_PHI, G_THETA, compare_le
from .barrier_nlp import BarrierNLP
from .feasibility import CONVERGED, set_feasibility_multipliers
from .status import SolverStop


class RestorationNLP(BarrierNLP):
    """Final."""

    elastic_pairs = True      # p, n: the KKT system eliminates them (kkt/elastic.py)

    def __init__(self, orig: BarrierNLP, w_R, zeta, rho):
        self.orig = orig
        xp = self.xp = orig.xp
        nw, m, nx = orig.nw, orig.m, orig.nx
        self.nw, self.m, self.nx = nw + 2 * m, m, nx
        self.w_R = w_R.copy()
        self.relaxed_equality_slacks = orig.relaxed_equality_slacks   # w leads v
        self.zeta, self.rho = zeta, rho
        self.deriv_zeta = zeta       # the weight of the last gradient: set_mu's doc
        self.D2 = xp.minimum(1.0, 1.0 / xp.maximum(xp.abs(w_R[:nx]), 1e-300)) ** 2
        self.wL = xp.concatenate([orig.wL, xp.zeros(2 * m)])
        self.wU = xp.concatenate([orig.wU, xp.full(2 * m, np.inf)])
        rows = np.arange(m)
        self.jac_rows = np.concatenate([orig.jac_rows, rows, rows])
        self.jac_cols = np.concatenate([orig.jac_cols, nw + rows, nw + m + rows])
        self._nj = len(orig.jac_rows)
        d = np.arange(nx)
        self.hess_rows = np.concatenate([orig.hess_rows, d])
        self.hess_cols = np.concatenate([orig.hess_cols, d])
        self._nh = len(orig.hess_rows)
        self._h = xp.zeros(m)

    def set_mu(self, mu) -> None:
        """The proximity weight follows the restoration problem's barrier parameter, as
        IPOPT's ``Eta(mu) = mu^0.5`` (RestoIpoptNLP, resto_proximity_weight 1) -- in the
        objective at once; a gradient and Hessian take the weight of their point's
        first evaluation: IPOPT caches the gradient by the point alone and evaluates
        the Hessian before an iteration's barrier update, so the step after a decrease
        of mu is taken with the previous weight's derivatives (the caller re-evaluates
        the objective alone).  ``deriv_zeta``: the weight of the last gradient, the
        Hessian's at that point."""
        self.zeta = math.sqrt(mu)

    def _split(self, v):
        nw, m = self.orig.nw, self.m
        return v[:nw], v[nw:nw + m], v[nw + m:]

    def f(self, v):
        xp = self.xp
        w, p, n = self._split(v)
        dx = w[:self.nx] - self.w_R[:self.nx]
        sp, sn, sq = scalars(xp, xp.sum(p), xp.sum(n), xp.sum(self.D2 * dx * dx))
        return float(self.rho * (sp + sn) + 0.5 * self.zeta * sq)

    def grad(self, v, out):
        nw = self.orig.nw
        w = v[:nw]
        out[:] = 0.0
        self.deriv_zeta = self.zeta
        out[:self.nx] = self.zeta * self.D2 * (w[:self.nx] - self.w_R[:self.nx])
        out[nw:] = self.rho
        return out

    def h(self, v, out):
        w, p, n = self._split(v)
        self.orig.h(w, out)
        out += n - p
        return out

    def jac(self, v, out):
        self.orig.jac(v[:self.orig.nw], out[:self._nj])
        out[self._nj:self._nj + self.m] = -1.0
        out[self._nj + self.m:] = 1.0
        return out

    def hess(self, v, y, obj_factor, out):
        self.orig.hess(v[:self.orig.nw], y, 0.0, out[:self._nh])
        out[self._nh:] = obj_factor * self.deriv_zeta * self.D2
        return out

    def original_objective(self, v):
        return self.orig.f(v[:self.orig.nw]) / self.orig.df

    def original_constr_viol(self, v, h) -> float:
        """The original problem's unscaled constraint violation at ``v``'s w, from the
        restoration residual ``h = h_orig(w) + n - p`` (no evaluation): what IPOPT's
        ``inf_pr`` column shows during the restoration phase."""
        return self.orig.unscaled_constr_viol(*self.original_point(v, h))

    def original_point(self, v, h):
        """``(w, h_orig(w))``: the original problem's part of ``v`` and its residual,
        from the restoration residual ``h = h_orig(w) + n - p`` (no evaluation)."""
        w, p, n = self._split(v)
        return w, h + p - n

    def describe_nonfinite(self, v) -> str:
        return self.orig.describe_nonfinite(v[:self.orig.nw])

    def structure(self, key, build):
        """The original problem's, under ``('restoration', key)``: this problem's
        structure is a function of the original's alone (module doc)."""
        return self.orig.structure(("restoration", key), build)


def _initial_p_n(xp, c, mu, rho):
    """IPOPT's starting p, n >= 0 with p - n = c: the minimizers of
    rho (p + n) - mu (ln p + ln n), i.e. the positive roots

        n = a + sqrt(a^2 + b),   a = (mu - rho c) / (2 rho),  b = mu c / (2 rho),
        p = c + n.

    Where that loses everything to cancellation (|c| >> mu / rho: a root of size
    ~mu / (2 rho) computed as a difference of two numbers of size |c|, possibly 0, and a
    zero slack divides by zero), the same root is taken as b / (sqrt(a^2 + b) - a), and p
    from its own quadratic likewise; elsewhere the values are the formula's above."""
    with errstate(xp):
        a = (mu - rho * c) / (2.0 * rho)
        b = mu * c / (2.0 * rho)
        r = xp.sqrt(a * a + b)
        n = a + r
        n = xp.where(n > 0, n, b / (r - a))
        p = c + n
        ap = (mu + rho * c) / (2.0 * rho)
        bp = -b
        rp = xp.sqrt(ap * ap + bp)
        p = xp.where(p > 0, p, bp / (rp - ap))
    return p, n


#: the status a square problem's solve ends with when the restoration problem converged
#: at a point satisfying the equations to constr_viol_tol (IPOPT's
#: FEASIBILITY_PROBLEM_SOLVED: the multipliers are then the feasibility problem's)
FEASIBLE_POINT = "Feasible_Point_Found"

#: the restoration run's stop-test answer when it took more than max_resto_iter
#: iterations (IPOPT's RestoConvergenceCheck: MAXITER_EXCEEDED, the solve ends with
#: Maximum_Iterations_Exceeded)
RESTO_MAXITER = "resto_maxiter"


#: the restoration run's status when its barrier update found a flagged tiny step at mu's
#: floor (the run raised Search_Direction_Becomes_Too_Small)
TINY_STOP = "tiny_step_at_mu_floor"


def restoration_phase(*, opts, shared, calc, filter, info, make_inner,
                      least_squares_y, square=False) -> None:
    """Run the restoration phase from the current iterate ``calc.it`` of the problem
    ``calc.nlp`` (``calc``: that run's :class:`~.quantities.BarrierQuantities`, with its
    iterate and barrier parameter); on return the iterate is a new, ``filter``-acceptable
    point with IPOPT's multipliers (:func:`_adopt`).  ``make_inner(nlp)``: a new
    interior-point run on the restoration problem ``nlp`` sharing ``shared``;
    ``least_squares_y(limit)``: ``(y, solved)``, the least-squares multipliers at the
    current iterate;
    ``info``: the log values, which take the restoration's last ones; ``square``: the
    original problem is square (module doc).  Raises :class:`SolverStop` when the phase
    fails or proves local infeasibility, and with :data:`FEASIBLE_POINT` when it solved a
    square problem's equations (the iterate then is the phase's point)."""
    o, sh, it, nlp_o = opts, shared, calc.it, calc.nlp
    m, mu = nlp_o.m, calc.barrier.mu
    if m == 0:
        raise SolverStop("Search_Direction_Becomes_Too_Small" if mu <= o.tol
                         else "Restoration_Failed",
                         "line search failed on a problem without constraints")
    sh.n_resto += 1
    theta0 = calc.theta(it.h)
    phi0 = calc.phi(it.w, it.f)
    filter.add(theta0, phi0)
    xp = calc.xp
    c = it.h.copy()
    inf0 = scalars(xp, amax_abs(xp, c))[0]
    mu_R = max(mu, inf0)
    # IPOPT's RestoConvergenceCheck: the returned point's primal infeasibility (max
    # norm) at most this
    kappa = o.required_infeasibility_reduction
    if "required_infeasibility_reduction" not in o.user:
        if square:
            kappa = 0.0      # a square problem: not left before its equations hold
        elif o.expect_infeasible_problem and sh.n_resto == 1 and theta0 > 1e-3:
            kappa = 1e-3     # IPOPT: the first phase must not return an infeasible point
    feasible = min(o.tol, o.constr_viol_tol)
    inf_max = max(kappa * inf0, feasible) if kappa > 0.0 else 0.0
    rho = o.resto_penalty_parameter
    nlp = RestorationNLP(nlp_o, it.w, math.sqrt(mu_R), rho)
    p, n = _initial_p_n(xp, c, mu_R, rho)
    v0 = xp.concatenate([it.w, p, n])
    inner = make_inner(nlp)
    # the phase's first line (its starting point) shows the failed search's values
    # (LineSearch._backtrack), tagged R, as IPOPT's does
    inner.info.alpha_pr, inner.info.ls, inner.info.tag = info.alpha_pr, info.ls, "R"
    inner.info.delta_w = info.delta_w
    # the original bounds' slacks as the outer iterate forms them: where one was lost to
    # rounding (safe-slack mode) the raw slack is 0 and would divide by zero in here
    inner.calc.safe_slack_mode = calc.safe_slack_mode
    inner.barrier.mu = mu_R
    inner.barrier.tau = max(o.tau_min, 1.0 - mu_R)
    inner.barrier.free = o.mu_strategy == "adaptive"     # IPOPT's resto.mu_strategy
    nL = calc.nL
    zL0 = xp.concatenate([xp.minimum(rho, it.zL), mu_R / p, mu_R / n])
    zU0 = xp.minimum(rho, it.zU)
    assert inner.calc.nL == nL + 2 * m
    inner.initialize(v0, y0=xp.zeros(m), zL0=zL0, zU0=zU0, push=False)
    nw = nlp_o.nw
    h_o = xp.zeros(m)

    first_iter = sh.iter

    def back_to_original(inner_it):
        """IPOPT's RestoFilterConvergenceCheck: the phase returns at a point whose max-norm
        infeasibility is at most ``inf_max`` and that is acceptable to the original
        filter and to the iterate the phase started from (sufficient decrease in theta
        or in the barrier function, without the obj_max_inc test).  First, as there, the
        phase ends once it has taken more than max_resto_iter iterations."""
        if sh.iter - first_iter > o.max_resto_iter:
            return RESTO_MAXITER
        w = inner_it.w[:nw]
        f_o, ok = calc.eval_zeroth(w, h_o)
        if not ok:
            return None
        inf = scalars(xp, amax_abs(xp, h_o))[0]
        if square and inf <= feasible:
            return "resto_success"     # the equations hold: no filter test (module doc)
        if inf > inf_max:
            return None
        th = calc.theta(h_o)
        ph = calc.phi(w, f_o)
        if not (math.isfinite(ph) and filter.acceptable(th, ph)):
            return None
        if (compare_le(th, (1.0 - G_THETA) * theta0, theta0)
                or compare_le(ph - phi0, -G_PHI * theta0, phi0)):
            return "resto_success"
        return None

    try:
        status = inner.run(stop_test=back_to_original)
    except SolverStop as stop:
        # a flagged tiny step at mu's floor (IPOPT's STOP_AT_TINY_STEP of the
        # restoration run): handled below, as IPOPT's MinC_1NrmRestorationPhase does
        if stop.status != "Search_Direction_Becomes_Too_Small":
            raise
        status = TINY_STOP
    finally:
        # however the run ends, its linear solver gives back what it borrowed from the
        # shared symbolic analysis (initialize above factorizes nothing: y0 is given)
        inner.release()
    w = inner.it.w[:nw].copy()
    f_o, ok = calc.eval_zeroth(w, h_o)

    def adopt():
        _adopt(o, calc, w, f_o, h_o, least_squares_y)
        info.take(inner.info)

    if status == TINY_STOP:
        adopt()
        # IPOPT: a point feasible to 1e2 tol (resto_failure_feasibility_threshold's
        # default; the scaled constraints' max-norm) is a failure of the phase, another one
        # a point of local infeasibility
        if ok and scalars(xp, amax_abs(xp, h_o))[0] <= 1e2 * o.tol:
            raise SolverStop("Restoration_Failed", "restoration phase converged to a point "
                             "with small primal infeasibility")
        raise SolverStop("Infeasible_Problem_Detected", "restoration phase converged to a "
                         "point of local infeasibility")
    if status != "resto_success":
        if status in CONVERGED:
            uc = scalars(xp, amax_abs(xp, h_o / nlp_o.dc_d))[0]
            if square and ok and uc <= o.constr_viol_tol:
                inner.log_held_line()
                adopt()
                # IPOPT's ComputeFeasibilityMultipliersPostprocess: whatever the
                # termination test says of them
                set_feasibility_multipliers(it, least_squares_y)
                raise SolverStop(FEASIBLE_POINT, "the restoration phase converged to a "
                                 "sufficiently feasible point of the square problem")
            if not (ok and uc <= o.constr_viol_tol * 1e-2):
                adopt()
                # IPOPT's count: the last line printed (the last point's was not)
                sh.iter -= 1
                raise SolverStop("Infeasible_Problem_Detected",
                                 "restoration phase converged to a point of local "
                                 "infeasibility")
            inner.log_held_line()
            filter.reset()     # feasible point the filter would reject: start afresh
        elif status in ("Maximum_Iterations_Exceeded", "Maximum_WallTime_Exceeded",
                        "Maximum_CpuTime_Exceeded"):
            adopt()
            raise SolverStop(status)
        elif status == RESTO_MAXITER:
            adopt()
            raise SolverStop("Maximum_Iterations_Exceeded",
                             f"more than {o.max_resto_iter} successive iterations taken "
                             "in the restoration phase (max_resto_iter)")
        else:
            raise SolverStop("Restoration_Failed", f"restoration phase ended: {status}")
    adopt()


def _adopt(o, calc, w, f_o, h_o, least_squares_y):
    """Make the restoration phase's result ``(w, f_o, h_o)`` the current iterate of
    ``calc``, with IPOPT's multipliers (MinC_1NrmRestorationPhase::PerformRestoration):
    the bound multipliers take one step as if the whole primal progress had been a
    single Newton step,

        dz = (mu + z (s - s_new)) / s - z,    z += alpha_z dz

    (alpha_z the dual fraction to the boundary), all reset to 1 when one exceeds
    bound_mult_reset_threshold (1000); y the least-squares multipliers when
    constr_mult_reset_threshold > 0 (zero above it), otherwise -- IPOPT's default, 0 --
    zero."""
    xp, it, mu, tau = calc.xp, calc.it, calc.barrier.mu, calc.barrier.tau
    sL, sU = calc.slacks(it.w)            # before the move (new arrays, not overwritten)
    it.w[:] = w
    it.moved()
    it.f = f_o
    it.h[:] = h_o
    calc.eval_first_order(it)
    tL, tU = calc.slacks(it.w)
    # IPOPT's ComputeBoundMultiplierStep, in its order of operations (the same step as
    # bound_multiplier_steps(w_new - w_old) up to rounding; restoration exits are
    # sensitive to that)
    with errstate(xp):
        dzL = (mu + it.zL * (sL - tL)) / sL - it.zL
        dzU = (mu + it.zU * (sU - tU)) / sU - it.zU
    alpha_z = calc.fraction_to_boundary_z(dzL, dzU, tau)
    it.zL += alpha_z * dzL
    it.zU += alpha_z * dzU
    if max(scalars(xp, amax(xp, it.zL), amax(xp, it.zU))) > o.bound_mult_reset_threshold:
        it.zL[:] = 1.0
        it.zU[:] = 1.0
    if o.constr_mult_reset_threshold > 0.0:
        it.y[:] = least_squares_y(o.constr_mult_reset_threshold)[0]
    else:
        it.y[:] = 0.0
