"""Python side: a compiled caspar problem + bound structure -> the arrays the Numba
interior point reads, and the compiled module (interpreter: one per machine; codegen:
one per model), both with Numba's on-disk cache."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys

import numpy as np

from caspar_backend.kkt.pattern import AugmentedPattern
from caspar_backend.batch.kkt import qdldl_order
from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.solver.options import resolve_options

from .tape import build_model

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(os.path.dirname(HERE), "gen")

STATUS = {0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level", 2: "Diverging_Iterates",
          3: "Maximum_Iterations_Exceeded"}

OPT_NAMES = ["tol", "dual_inf_tol", "constr_viol_tol", "compl_inf_tol", "acceptable_tol",
             "acceptable_iter", "mu_init", "mu_linear_decrease_factor",
             "mu_superlinear_decrease_power", "barrier_tol_factor", "tau_min", "kappa_d",
             "kappa_sigma", "bound_push", "bound_frac", "slack_bound_push",
             "slack_bound_frac", "bound_relax_factor", "equality_relax_factor",
             "constr_mult_init_max", "bound_mult_init_val", None,
             "nlp_scaling_max_gradient", "nlp_scaling_min_value", "obj_scaling_factor",
             "max_refinement_steps", "residual_ratio_max", "kkt_static_regularization",
             "first_hessian_perturbation", "min_hessian_perturbation",
             "max_hessian_perturbation", "perturb_inc_fact_first", "perturb_inc_fact",
             "perturb_dec_fact", "jacobian_regularization_value",
             "jacobian_regularization_exponent", "theta_max_fact", "theta_min_fact",
             "alpha_red_factor", "max_soc", "kappa_soc", "obj_max_inc", "max_filter_resets",
             "filter_reset_trigger", "watchdog_shortened_iter_trigger", "slack_move",
             "refinement_contraction_max", "max_iter", "diverging_iterates_tol",
             "acceptable_obj_change_tol", "acceptable_dual_inf_tol",
             "acceptable_constr_viol_tol", "acceptable_compl_inf_tol", None]


def options_array(**options):
    o = resolve_options(options)
    arr = np.zeros(len(OPT_NAMES))
    for k, name in enumerate(OPT_NAMES):
        if name is not None:
            arr[k] = float(getattr(o, name))
    arr[21] = 1.0 if o.nlp_scaling_method == "gradient-based" else 0.0
    arr[53] = AugmentedKKT.PRIVATE_PIVOT_FRACTION
    return arr


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _parts(*names):
    return "\n\n".join(open(os.path.join(HERE, n)).read() for n in names)


def interp_module():
    """The generic module: helpers + tape interpreter + interior point (model = data)."""
    os.makedirs(GEN, exist_ok=True)
    src = _parts("common.py", "interp_eval.py", "ipm_core.py")
    path = os.path.join(GEN, "interp_solver.py")
    if not os.path.exists(path) or open(path).read() != src:
        with open(path, "w") as f:
            f.write(src)
    return _load(path, "caspar_proto_interp")


def codegen_module(model):
    from .codegen import generate
    os.makedirs(GEN, exist_ok=True)
    ev = generate(model)
    src = _parts("common.py") + "\n\n" + ev + "\n\n" + _parts("ipm_core.py")
    h = hashlib.sha256(src.encode()).hexdigest()[:16]
    path = os.path.join(GEN, f"model_{h}.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(src)
    return _load(path, f"caspar_proto_model_{h}")


def _symperm_upper(n, Ap, Ai, perm):
    """cs_symperm of an upper CSC by perm (C[i,j] = K[perm[i], perm[j]]): (Cp, Ci, map
    K position -> C position)."""
    pinv = np.empty(n, np.int64)
    pinv[perm] = np.arange(n)
    cnt = np.zeros(n, np.int64)
    for j in range(n):
        j2 = pinv[j]
        for p in range(Ap[j], Ap[j + 1]):
            i = Ai[p]
            if i > j:
                continue
            cnt[max(pinv[i], j2)] += 1
    Cp = np.zeros(n + 1, np.int64)
    Cp[1:] = np.cumsum(cnt)
    w = Cp[:-1].copy()
    Ci = np.zeros(Cp[-1], np.int64)
    cmap = np.zeros(len(Ai), np.int64)
    for j in range(n):
        j2 = pinv[j]
        for p in range(Ap[j], Ap[j + 1]):
            i = Ai[p]
            if i > j:
                continue
            i2 = pinv[i]
            q = w[max(i2, j2)]
            w[max(i2, j2)] += 1
            Ci[q] = min(i2, j2)
            cmap[p] = q
    return Cp, Ci, cmap


def _etree(n, Ap, Ai):
    """QDLDL_etree: (etree, Lnz)."""
    work = np.zeros(n, np.int64)
    Lnz = np.zeros(n, np.int64)
    etree = -np.ones(n, np.int64)
    for j in range(n):
        work[j] = j
        for p in range(Ap[j], Ap[j + 1]):
            i = Ai[p]
            if i > j:
                raise ValueError("not upper triangular")
            while work[i] != j:
                if etree[i] == -1:
                    etree[i] = j
                Lnz[i] += 1
                work[i] = j
                i = etree[i]
    return etree, Lnz


class SmallSolver:
    """One compiled problem with one bound structure (finite sides, equality rows)."""

    FILTER_CAP = 64

    def __init__(self, problem, lbx, ubx, lbg, ubg, backend="interp", **options):
        self.problem = problem
        model = self.model = build_model(problem)
        self.mod = (interp_module() if backend == "interp" else None if backend == "none"
                    else codegen_module(model))
        n, m = model["n"], model["m"]
        lbx, ubx = (np.broadcast_to(np.asarray(a, float), (n,)).copy() for a in (lbx, ubx))
        lbg, ubg = (np.broadcast_to(np.asarray(a, float), (m,)).copy() for a in (lbg, ubg))
        self.bounds = (lbx, ubx, lbg, ubg)
        self.O = options_array(**options)
        from caspar_backend.batch.solve import _sequential_reason
        # options whose path the prototype does not implement: every solve "ejected"
        self.unsupported = _sequential_reason(resolve_options(dict(options)))
        eq = lbg == ubg
        slack_rows = np.flatnonzero(~eq)
        nx, ns = n, len(slack_rows)
        nw = nx + ns
        ujr, ujc = model["jac_rows"], model["jac_cols"]
        jr = np.concatenate([ujr, slack_rows]).astype(np.int64)
        jc = np.concatenate([ujc, nx + np.arange(ns)]).astype(np.int64)
        hr, hc = model["hess_rows"], model["hess_cols"]
        wLf = np.concatenate([np.isfinite(lbx), np.isfinite(lbg[slack_rows])])
        wUf = np.concatenate([np.isfinite(ubx), np.isfinite(ubg[slack_rows])])
        iL, iU = np.flatnonzero(wLf), np.flatnonzero(wUf)
        dampL = (~wUf[iL]).astype(float)
        dampU = (~wLf[iU]).astype(float)
        pat = AugmentedPattern(nw, m, hr, hc, jr, jc)
        st = pat.structure
        N = pat.N
        Kp, Ki = np.asarray(st.indptr, np.int64), np.asarray(st.indices, np.int64)
        perm = qdldl_order(st, nw)
        Cp, Ci, cmap = _symperm_upper(N, Kp, Ki, perm)
        etree, Lnz = _etree(N, Cp, Ci)
        Lp = np.zeros(N + 1, np.int64)
        Lp[1:] = np.cumsum(Lnz)
        nnzL = int(Lp[-1])
        off = np.flatnonzero(hr != hc)
        colsq = np.concatenate([hr, hc[off], jc, np.arange(nw)]).astype(np.int64)
        count = np.bincount(jc, minlength=nw)
        in_hess = np.zeros(nw, bool)
        in_hess[hr], in_hess[hc] = True, True
        single_row = (np.bincount(jr, minlength=m) == 1)[jr]
        priv = np.flatnonzero(((count[jc] == 1) & ~in_hess[jc]) | single_row)
        priv_none = np.where(np.bincount(jr[priv], minlength=m) > 0, 0.0, np.inf)
        nsrc = int(pat.off[4])
        SI = np.array([n, m, nw, nx, ns, len(iL), len(iU), len(jr), len(ujr), len(hr), N,
                       pat.nnz, nnzL, int(eq.sum()), len(priv), len(off), nsrc, len(colsq),
                       self.FILTER_CAP], np.int64)
        i64 = lambda a: np.ascontiguousarray(a, np.int64)
        self.S = (SI, i64(slack_rows), i64(eq.astype(np.int64)), i64(iL), i64(iU),
                  dampL, dampU, i64(np.flatnonzero(dampL)), i64(np.flatnonzero(dampU)),
                  jr, jc, i64(hr), i64(hc), i64(pat.map), i64(off), colsq, i64(priv),
                  i64(jc[priv]), i64(jr[priv]), priv_none, Kp, Ki, i64(Kp[1:] - 1), Cp, Ci,
                  cmap, i64(perm), Lp, etree, Lnz, i64(np.flatnonzero(eq)), i64(ujr))
        z = lambda k: np.zeros(max(int(k), 0))
        ng, nju, nh, nj = len(model["gt"]), len(ujr), len(hr), len(jr)
        nL, nU = len(iL), len(iU)
        maxN = int(max([r[1] for r in model["gt"]] + [1]))
        self.E = (model["gt"], model["op"], model["arg"], model["cval"], model["outs"],
                  model["vt"], model["pt"], model["dt"], model["rows"], model["grad_idx"],
                  model["term_rows"], model["acc_rows"], model["jac_map"],
                  np.array([n, m, model["nobj"], ng, int(model["has_jac_map"])], np.int64),
                  z(model["max_tape"]), z(model["max_k"]), z(model["max_q"]), z(model["max_r"]),
                  z(maxN), z(n), z(problem.n_params), z(len(model["grad_idx"])),
                  z(len(model["term_rows"])), z(model["nraw"]), z(m))
        self.V = (z(m), z(1), z(m), z(m), z(n), z(nju), z(nju), z(m), z(nw), z(nw), z(ns),
                  z(m), z(m))
        self.IT = (z(nw), z(m), z(nL), z(nU), z(1), z(m), z(nw), z(nj), z(nh))
        T = max(nw, m, N, 1)
        self.Q = (z(nw), z(nL), z(nU), z(T), z(nL), z(nU))
        self.KT = (z(pat.nnz), z(N), z(nsrc), z(nw), z(m), z(len(colsq)), z(m), z(N), z(N),
                   z(N), z(N), z(N), z(N))
        zi = lambda k: np.zeros(k, np.int64)
        self.L = (z(pat.nnz), z(nnzL), z(N), z(N), z(N), zi(nnzL), zi(N), zi(N), zi(N),
                  zi(N), z(N))
        self.D = (z(nw), z(m), z(nL), z(nU), z(nw), z(nw), z(nw), z(m), z(nw), z(m), z(m),
                  z(1), z(1), z(5), z(nw), z(m), z(m), z(nL), z(nU), z(nw), z(nj))
        self.FT = np.full((2, self.FILTER_CAP), np.inf)
        self.FI = np.zeros(3, np.int64)
        self.out = np.zeros(1)

    def solve(self, x0, p):
        """(status code, iterations, x, f)."""
        if self.unsupported:
            return -30, 0, np.asarray(x0, float), np.nan
        E = self.E
        E[20][:] = p
        lbx, ubx, lbg, ubg = self.bounds
        st, it = self.mod.solve_instance(E, self.S, self.O, self.V, self.IT, self.Q, self.KT,
                                         self.L, self.D, self.FT, self.FI,
                                         np.asarray(x0, float), lbx, ubx, lbg, ubg, self.out)
        f = self.out[0] * self.model["sense"]
        return st, it, E[19].copy(), f

    # direct access to the evaluator for tests
    def eval_all(self, x, p, lam, objf):
        E = self.E
        E[20][:] = p
        E[19][:] = x
        g = np.zeros(self.model["m"])
        f = self.mod.ev_zeroth(E, g)
        gr = np.zeros(self.model["n"])
        jv = np.zeros(len(self.model["jac_rows"]))
        self.mod.ev_first(E, gr, jv)
        hv = np.zeros(len(self.model["hess_rows"]))
        self.mod.ev_hess(E, np.asarray(lam, float), float(objf), hv)
        return f, g, gr, jv, hv


def solve_many(s, X0, P):
    """(status, iterations, X, f) of B instances through one Numba call."""
    B = X0.shape[0]
    st = np.zeros(B, np.int64)
    it = np.zeros(B, np.int64)
    X = np.zeros((B, s.model["n"]))
    f = np.zeros(B)
    lbx, ubx, lbg, ubg = s.bounds
    s.mod.solve_many(s.E, s.S, s.O, s.V, s.IT, s.Q, s.KT, s.L, s.D, s.FT, s.FI,
                     np.ascontiguousarray(X0, float), np.ascontiguousarray(P, float),
                     lbx, ubx, lbg, ubg, s.out, st, it, X, f)
    return st, it, X, f * s.model["sense"]


def flat_module(mapping):
    from .flatten import flatten_source
    os.makedirs(GEN, exist_ok=True)
    src = flatten_source(_parts("common.py", "interp_eval.py", "ipm_core.py"), mapping)
    path = os.path.join(GEN, "interp_flat.py")
    if not os.path.exists(path) or open(path).read() != src:
        with open(path, "w") as f:
            f.write(src)
    return _load(path, "caspar_proto_interp_flat")


class FlatSolver:
    """SmallSolver's arrays packed into four flat buffers (proto/flatten.py): the same
    interpreter and interior point, 4 arrays per call instead of ~150."""

    def __init__(self, problem, lbx, ubx, lbg, ubg, **options):
        from .flatten import layout, pack
        self._inner = SmallSolver(problem, lbx, ubx, lbg, ubg, backend="none", **options)
        t = self._inner
        tuples = dict(E=t.E, S=t.S, V=t.V, IT=t.IT, Q=t.Q, KT=t.KT, L=t.L, DR=t.D)
        self.mapping, fl, il = layout(tuples)
        self.Fb, self.FO = pack(fl, np.float64)
        self.Ib, self.IO = pack(il, np.int64)
        self.mod = flat_module(self.mapping)
        _, kp, _ = self.mapping[("E", 20)]
        _, kx, _ = self.mapping[("E", 19)]
        self.p_view = self.Fb[self.FO[kp]:self.FO[kp + 1]]
        self.x_view = self.Fb[self.FO[kx]:self.FO[kx + 1]]
        self.model, self.bounds, self.O = t.model, t.bounds, t.O
        self.FT, self.FI, self.out = t.FT, t.FI, t.out
        self.unsupported = t.unsupported

    def solve(self, x0, p):
        if self.unsupported:
            return -30, 0, np.asarray(x0, float), np.nan
        self.p_view[:] = p
        lbx, ubx, lbg, ubg = self.bounds
        st, it = self.mod.solve_instance(self.Fb, self.FO, self.Ib, self.IO, self.O, self.FT,
                                         self.FI, np.asarray(x0, float), lbx, ubx, lbg, ubg,
                                         self.out)
        return st, it, self.x_view.copy(), self.out[0] * self.model["sense"]
