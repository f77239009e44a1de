"""The primal-dual interior-point iteration (Waechter & Biegler 2006, IPOPT's algorithm).

It solves a :class:`~caspar_backend.solver.nlp.BarrierNLP`

    min f(w)  s.t.  h(w) = 0,  wL <= w <= wU

through the barrier problems

    min phi_mu(w) = f(w) - mu sum_{i in L} ln(w_i - wL_i) - mu sum_{i in U} ln(wU_i - w_i)
                    + kappa_d mu (sum_{L only} (w_i - wL_i) + sum_{U only} (wU_i - w_i))
    s.t. h(w) = 0

for a decreasing sequence mu.  Iterates: primal ``w`` (nw), constraint multipliers ``y``
(m, Lagrangian ``L = f + y^T h - zL^T (w - wL)_L + zU^T (w - wU)_U``), bound multipliers
``zL`` / ``zU`` over the index sets ``iL`` / ``iU`` of finite bounds (int64 arrays).

Each iteration: convergence test (scaled overall NLP error E_0 with s_d, s_c, plus the
unscaled tolerances), barrier update (:mod:`.mu`), Newton step from the KKT system with
inertia correction (delta_w, delta_c), fraction-to-the-boundary, filter line search with
second-order corrections (:mod:`.linesearch`), restoration phase if the line search fails
(:mod:`.restoration`).  The same class runs the restoration problem, recursively.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..kkt import AugmentedKKT
from ..linsolve import make_linear_solver
from .filter import Filter

_EPS = np.finfo(float).eps


class SolverStop(Exception):
    """Raised internally to end the solve with a status."""

    def __init__(self, status, message=""):
        super().__init__(status)
        self.status, self.message = status, message


class Shared:
    """State shared by an interior-point run and its nested restoration runs."""

    def __init__(self, opts, counter, log, t0):
        self.opts, self.counter, self.log, self.t0 = opts, counter, log, t0
        self.iter = 0
        self.t_factor = 0.0
        self.t_solve = 0.0
        self.history = []
        self.n_resto = 0


class InteriorPoint:
    """Final.  ``resto=True`` marks the restoration phase (log tag 'r', no nested
    restoration)."""

    def __init__(self, nlp, shared: Shared, resto=False):
        from .lbfgs import LBFGS

        self.nlp, self.sh, self.opts, self.resto = nlp, shared, shared.opts, resto
        o = self.opts
        nw, m = self.nw, self.m = nlp.nw, nlp.m
        self.iL = np.flatnonzero(np.isfinite(nlp.wL))
        self.iU = np.flatnonzero(np.isfinite(nlp.wU))
        self.dampL = ~np.isfinite(nlp.wU[self.iL])
        self.dampU = ~np.isfinite(nlp.wL[self.iU])
        self.lbfgs = None
        nlow = 0
        if o.hessian_approximation == "limited-memory":
            self.lbfgs = LBFGS(nlp.nx, o.limited_memory_max_history,
                               o.limited_memory_max_skipping)
            nlow = 2 * o.limited_memory_max_history
        self.kkt = AugmentedKKT(nw, m, nlp.hess_rows, nlp.hess_cols, nlp.jac_rows,
                                nlp.jac_cols, make_linear_solver(o.linear_solver),
                                n_lowrank=nlow, max_refinement_steps=o.max_refinement_steps,
                                residual_ratio_max=o.residual_ratio_max,
                                static_regularization=o.kkt_static_regularization)
        self.jr, self.jc = np.asarray(nlp.jac_rows), np.asarray(nlp.jac_cols)
        # iterate and its function values, preallocated
        self.w, self.y = np.zeros(nw), np.zeros(m)
        self.zL, self.zU = np.zeros(len(self.iL)), np.zeros(len(self.iU))
        self.gradf, self.hv = np.zeros(nw), np.zeros(m)
        self.jv = np.zeros(len(self.jr))
        self.f = 0.0
        # trial buffers (line search)
        self.w_t, self.h_t = np.zeros(nw), np.zeros(m)
        self.filter = Filter()
        self.mu = o.mu_init
        self.tau = max(o.tau_min, 1.0 - self.mu)
        self.delta_w_last = 0.0
        self.delta_c_used = False
        self.tiny_step_last = False
        self.acceptable_count = 0
        self.last_obj = None
        self.stop_hook = None          # restoration's convergence test
        self.mu_state = None           # adaptive mu bookkeeping (mu.py)
        self.info = dict(alpha_du=0.0, alpha_pr=0.0, ls=0, d_norm=0.0, delta_w=0.0,
                         tag=" ")

    # ================================================================ vector helpers
    def slacks(self, w):
        return w[self.iL] - self.nlp.wL[self.iL], self.nlp.wU[self.iU] - w[self.iU]

    def Aty(self, jv, y):
        """A^T y with A in COO (jr, jc, jv)."""
        return np.bincount(self.jc, weights=jv * y[self.jr], minlength=self.nw)

    def theta(self, h):
        return float(np.sum(np.abs(h)))

    def phi(self, w, f, mu=None):
        mu = self.mu if mu is None else mu
        sL, sU = self.slacks(w)
        if (sL <= 0).any() or (sU <= 0).any():
            return math.inf
        kd = self.opts.kappa_d * mu
        return (f - mu * (np.sum(np.log(sL)) + np.sum(np.log(sU)))
                + kd * (np.sum(sL[self.dampL]) + np.sum(sU[self.dampU])))

    def grad_phi(self):
        sL, sU = self.slacks(self.w)
        g = self.gradf.copy()
        kd = self.opts.kappa_d * self.mu
        g[self.iL] += -self.mu / sL + kd * self.dampL
        g[self.iU] += self.mu / sU - kd * self.dampU
        return g

    # ================================================================ evaluations
    def eval_first_order(self, w):
        """f, h at w are current; evaluate grad and Jacobian (raise on NaN/Inf)."""
        self.nlp.grad(w, self.gradf)
        self.nlp.jac(w, self.jv)
        if not (np.all(np.isfinite(self.gradf)) and np.all(np.isfinite(self.jv))):
            self.invalid(w, "derivative")

    def eval_zeroth(self, w, hout):
        f = self.nlp.f(w)
        self.nlp.h(w, hout)
        ok = math.isfinite(f) and bool(np.all(np.isfinite(hout)))
        return f, ok

    def invalid(self, w, what):
        desc = self.nlp.describe_nonfinite(w)
        msg = f"NaN or Inf in a {what} evaluation"
        raise SolverStop("Invalid_Number_Detected", msg + (f": {desc}" if desc else ""))

    # ================================================================ initialisation
    def push_into_bounds(self, w, kappa1, kappa2, slack_kappa1, slack_kappa2):
        wL, wU, nx = self.nlp.wL, self.nlp.wU, self.nlp.nx
        k1 = np.full(self.nw, kappa1)
        k2 = np.full(self.nw, kappa2)
        k1[nx:], k2[nx:] = slack_kappa1, slack_kappa2
        with np.errstate(invalid="ignore"):
            pL = np.where(np.isfinite(wU), np.minimum(k1 * np.maximum(1, np.abs(wL)),
                                                      k2 * (wU - wL)),
                          k1 * np.maximum(1, np.abs(wL)))
            pU = np.where(np.isfinite(wL), np.minimum(k1 * np.maximum(1, np.abs(wU)),
                                                      k2 * (wU - wL)),
                          k1 * np.maximum(1, np.abs(wU)))
            lo = np.where(np.isfinite(wL), wL + pL, -np.inf)
            hi = np.where(np.isfinite(wU), wU - pU, np.inf)
        out = np.minimum(np.maximum(w, lo), hi)
        # interval too narrow for both pushes: midpoint
        bad = lo > hi
        out[bad] = 0.5 * (wL[bad] + wU[bad])
        return out

    def initialize(self, w0, y0=None, zL0=None, zU0=None, push=True, ls_mult=True):
        o = self.opts
        w = np.asarray(w0, float)
        if push:
            w = self.push_into_bounds(w, o.bound_push, o.bound_frac, o.slack_bound_push,
                                      o.slack_bound_frac)
        self.w[:] = w
        self.f, ok = self.eval_zeroth(self.w, self.hv)
        if not ok:
            self.invalid(self.w, "function")
        self.eval_first_order(self.w)
        self.zL[:] = o.bound_mult_init_val if zL0 is None else zL0
        self.zU[:] = o.bound_mult_init_val if zU0 is None else zU0
        if y0 is not None:
            self.y[:] = y0
        elif ls_mult and self.m:
            self.y[:] = self.least_squares_y()
        th = self.theta(self.hv)
        self.theta_max = o.theta_max_fact * max(1.0, th)
        self.theta_min = o.theta_min_fact * max(1.0, th)

    def least_squares_y(self):
        """y minimizing ||grad f + A^T y - zL + zU||_2 through [[I, A^T], [A, 0]]; zero if
        that is singular or its max-norm exceeds constr_mult_init_max (IPOPT)."""
        k = self.kkt
        rd = self.gradf.copy()
        rd[self.iL] -= self.zL
        rd[self.iU] += self.zU
        k.hess_values[:] = 0.0
        k.jac_values[:] = self.jv
        k.sigma[:] = 0.0
        k.lowrank_Q[:] = 0.0
        k.lowrank_c[:] = -1.0
        y = np.zeros(self.m)
        for dc in (0.0, 1e-10):
            k.delta_w, k.delta_c = 1.0, dc
            k.build()
            t = time.perf_counter()
            fact, ok = k.factorize()
            self.sh.t_factor += time.perf_counter() - t
            if ok:
                _, y = k.solve(-rd, np.zeros(self.m))
                break
        if not np.all(np.isfinite(y)) or np.max(np.abs(y), initial=0.0) > \
                self.opts.constr_mult_init_max:
            y = np.zeros(self.m)
        return y

    # ================================================================ errors
    def errors(self, mu=0.0):
        """Scaled (dual, constr, compl) max-norms, s_d, s_c, and the barrier error."""
        rd = self.gradf + self.Aty(self.jv, self.y)
        rd[self.iL] -= self.zL
        rd[self.iU] += self.zU
        sL, sU = self.slacks(self.w)
        dual = float(np.max(np.abs(rd), initial=0.0))
        constr = float(np.max(np.abs(self.hv), initial=0.0))
        cL, cU = sL * self.zL, sU * self.zU
        compl = max(float(np.max(np.abs(cL), initial=0.0)),
                    float(np.max(np.abs(cU), initial=0.0)))
        compl_mu = max(float(np.max(np.abs(cL - mu), initial=0.0)),
                       float(np.max(np.abs(cU - mu), initial=0.0)))
        smax = 100.0
        nz = len(self.zL) + len(self.zU)
        zsum = float(np.sum(np.abs(self.zL)) + np.sum(np.abs(self.zU)))
        sd = max(smax, (np.sum(np.abs(self.y)) + zsum) / max(1, self.m + nz)) / smax
        sc = max(smax, zsum / max(1, nz)) / smax
        return dict(dual=dual, constr=constr, compl=compl, compl_mu=compl_mu, sd=sd, sc=sc,
                    E0=max(dual / sd, constr, compl / sc),
                    Emu=max(dual / sd, constr, compl_mu / sc))

    def unscaled(self, e):
        nlp = self.nlp
        df = getattr(nlp, "df", 1.0)
        dc = getattr(nlp, "dc", None)
        constr = e["constr"]
        if hasattr(nlp, "unscaled_constr_viol"):
            constr = nlp.unscaled_constr_viol(self.w, self.hv)
        return dict(dual=e["dual"] / df, constr=constr, compl=e["compl"] / df)

    # ================================================================ main loop
    def run(self):
        """Iterate until a termination test fires; returns the status name."""
        from .linesearch import line_search
        from .mu import update_mu

        o, sh = self.opts, self.sh
        self.start_iter = sh.iter
        while True:
            e = self.errors(self.mu)
            ue = self.unscaled(e)
            self.log_iteration(e, ue)
            self.final_errors = (e, ue)
            if self.stop_hook is not None and sh.iter > self.start_iter:
                st = self.stop_hook(self)
                if st is not None:
                    return st
            st = self.check_termination(e, ue)
            if st is not None:
                return st
            if o.start_with_resto and not self.resto and sh.iter == 0 and sh.n_resto == 0 \
                    and self.m > 0:
                from .restoration import restoration_phase

                restoration_phase(self)
                continue
            update_mu(self, e)
            d = self.compute_direction()
            if d is None:
                if self.resto:
                    raise SolverStop("Restoration_Failed", "step computation failed in "
                                     "the restoration phase")
                raise SolverStop("Error_In_Step_Computation",
                                 "the KKT system could not be regularized")
            accepted = line_search(self, d)
            if not accepted:
                if self.resto:
                    raise SolverStop("Restoration_Failed", "line search failed in the "
                                     "restoration phase")
                from .restoration import restoration_phase

                restoration_phase(self)    # counts its own iterations
                continue
            sh.iter += 1

    def check_termination(self, e, ue):
        o, sh = self.opts, self.sh
        if True:
            if (e["E0"] <= o.tol and ue["dual"] <= o.dual_inf_tol
                    and ue["constr"] <= o.constr_viol_tol and ue["compl"] <= o.compl_inf_tol):
                return "Solve_Succeeded"
            fval = self.f
            objchg = (abs(fval - self.last_obj) / max(1.0, abs(fval))
                      if self.last_obj is not None else math.inf)
            self.last_obj = fval
            if (o.acceptable_iter > 0 and e["E0"] <= o.acceptable_tol
                    and ue["dual"] <= o.acceptable_dual_inf_tol
                    and ue["constr"] <= o.acceptable_constr_viol_tol
                    and ue["compl"] <= o.acceptable_compl_inf_tol
                    and objchg <= o.acceptable_obj_change_tol):
                self.acceptable_count += 1
                if self.acceptable_count >= o.acceptable_iter:
                    return "Solved_To_Acceptable_Level"
            else:
                self.acceptable_count = 0
        if np.max(np.abs(self.w), initial=0.0) > o.diverging_iterates_tol:
            return "Diverging_Iterates"
        if sh.iter >= o.max_iter:
            return "Maximum_Iterations_Exceeded"
        if time.perf_counter() - sh.t0 > o.max_wall_time:
            return "Maximum_WallTime_Exceeded"
        return None

    # ================================================================ Newton step
    def compute_direction(self):
        """Solve the primal-dual system with inertia correction; returns the direction
        dict (dw, dy, dzL, dzU, grad_phi) or None when regularization failed."""
        o, k, sh = self.opts, self.kkt, self.sh
        sL, sU = self.slacks(self.w)
        k.sigma[:] = 0.0
        np.add.at(k.sigma, self.iL, self.zL / sL)
        np.add.at(k.sigma, self.iU, self.zU / sU)
        k.jac_values[:] = self.jv
        if self.lbfgs is None:
            self.nlp.hess(self.w, self.y, 1.0, k.hess_values)
            if not np.all(np.isfinite(k.hess_values)):
                self.invalid(self.w, "Hessian")
        else:
            self.lbfgs.fill_kkt(k, self.nw)
        gphi = self.grad_phi()
        rhs_w = -(gphi + self.Aty(self.jv, self.y))
        rhs_c = -self.hv
        if not self.regularize_and_factorize():
            return None
        t = time.perf_counter()
        dw, dy = k.solve(rhs_w, rhs_c)
        sh.t_solve += time.perf_counter() - t
        if k.last_residual_ratio > 1e-6 and k.delta_w == 0.0:
            # refinement against K failed: K is (numerically) singular and only the static
            # pivot regularization let it factorize; regularize as IPOPT does
            if not self.regularize_and_factorize(singular=True):
                return None
            t = time.perf_counter()
            dw, dy = k.solve(rhs_w, rhs_c)
            sh.t_solve += time.perf_counter() - t
        if not (np.all(np.isfinite(dw)) and np.all(np.isfinite(dy))):
            return None
        dzL = (self.mu - self.zL * sL - self.zL * dw[self.iL]) / sL
        dzU = (self.mu - self.zU * sU + self.zU * dw[self.iU]) / sU
        return dict(dw=dw, dy=dy, dzL=dzL, dzU=dzU, gphi=gphi, rhs_w=rhs_w)

    def _factor(self):
        t = time.perf_counter()
        self.kkt.build()
        fact, ok = self.kkt.factorize()
        self.sh.t_factor += time.perf_counter() - t
        return fact, ok

    def regularize_and_factorize(self, singular=False):
        """IPOPT's inertia correction (Waechter & Biegler Algorithm IC).  ``singular``:
        the unperturbed matrix is known to be singular; start perturbing at once."""
        o, k = self.opts, self.kkt
        k.delta_w, k.delta_c = 0.0, 0.0
        if self.delta_c_used:
            # the Jacobian was found degenerate before: regularize from the start
            k.delta_c = o.jacobian_regularization_value * self.mu ** \
                o.jacobian_regularization_exponent
        self.info["delta_w"] = 0.0
        if singular:
            ok = False
            fact = type("F", (), {"n_zero": 1})()
        else:
            fact, ok = self._factor()
        if ok:
            return True
        if fact.n_zero > 0 and k.delta_c == 0.0 and self.m > 0:
            k.delta_c = o.jacobian_regularization_value * self.mu ** \
                o.jacobian_regularization_exponent
            self.delta_c_used = True
            fact, ok = self._factor()
            if ok:
                return True
        if self.delta_w_last == 0.0:
            k.delta_w = o.first_hessian_perturbation
        else:
            k.delta_w = max(o.min_hessian_perturbation, o.perturb_dec_fact * self.delta_w_last)
        while True:
            fact, ok = self._factor()
            if ok:
                self.delta_w_last = k.delta_w
                self.info["delta_w"] = k.delta_w
                return True
            if fact.n_zero > 0 and k.delta_c == 0.0:
                k.delta_c = o.jacobian_regularization_value * self.mu ** \
                    o.jacobian_regularization_exponent
            k.delta_w *= o.perturb_inc_fact_first if self.delta_w_last == 0.0 \
                else o.perturb_inc_fact
            if k.delta_w > o.max_hessian_perturbation:
                return False

    def fraction_to_boundary(self, dw, tau):
        sL, sU = self.slacks(self.w)
        a = 1.0
        dL, dU = dw[self.iL], -dw[self.iU]
        neg = dL < 0
        if neg.any():
            a = min(a, float(np.min(-tau * sL[neg] / dL[neg])))
        neg = dU < 0
        if neg.any():
            a = min(a, float(np.min(-tau * sU[neg] / dU[neg])))
        return a

    def fraction_to_boundary_z(self, dzL, dzU, tau):
        a = 1.0
        for z, dz in ((self.zL, dzL), (self.zU, dzU)):
            neg = dz < 0
            if neg.any():
                a = min(a, float(np.min(-tau * z[neg] / dz[neg])))
        return a

    # ================================================================ log
    def log_iteration(self, e, ue):
        from .result import IterationRecord

        info = self.info
        nlp = self.nlp
        obj = self.f / getattr(nlp, "df", 1.0)
        if self.resto and hasattr(nlp, "original_objective"):
            obj = nlp.original_objective(self.w)
        rec = IterationRecord(self.sh.iter, obj, ue["constr"] if not self.resto else
                              e["constr"], e["dual"], self.mu, info["d_norm"],
                              info["delta_w"], info["alpha_du"], info["alpha_pr"],
                              info["ls"], info["tag"], self.resto)
        self.sh.history.append(rec)
        if self.sh.log is not None:
            self.sh.log.iteration(rec)
