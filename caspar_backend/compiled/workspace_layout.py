"""The flat buffers of one (problem, bound structure) and their offsets.

A :class:`WorkspaceLayout` is built once per problem and bound structure (finite sides,
equality rows; :func:`.structure.bound_signature`).  It holds

* ``Ib`` (int64) with offsets ``IO``: the structure, slots ``slots.INT_SLOTS`` in that
  order (``Ib[IO[k]:IO[k+1]]`` is slot k); read by every solve, written only in its
  int scratch slot (the filter counters) and, by the caller, its
  stop request;
* ``FO``: the offsets of the float64 workspace, slots ``slots.FLOAT_SLOTS``;
* a template float workspace ``Fb0`` with the model's constants (tape constants, data,
  damping flags) in place; :meth:`new_workspace` copies it for a solve in flight.

Slot sizes (n variables, nx of them free, m constraints, ns slacks, nw = nx + ns,
N = nw + m KKT rows, nL/nU finite lower/upper bounds of w, nj/nh Jacobian/Hessian
entries of the slack problem with the slack entries, nje/nhe the evaluator's) are listed in :meth:`_float_sizes`; the kernels index the slots through the
constants of :mod:`.kernels.slots`.
"""
from __future__ import annotations

import numpy as np

from ..linsolve.dense_kkt import small_pivoting
from .kernels import slots
from .kernels.resume_state import RESUME_FIXED_SIZE
from .kernels.team import MAX_LANES, PARTIALS
from .structure import build_structure
from .tape import Unsupported, build_model, eval_float_slots, eval_int_slots

#: filter entries per solve (a full filter ejects the solve to the general path)
FILTER_CAP = 64
#: line-search state entries: theta_min, theta_max, last mu, shortened steps, tiny step
LS_STATE_SIZE = 5


def _pack(arrays, names, dtype):
    """``(buf, offs)``: the slots ``names`` in that order in one flat ``dtype`` buffer,
    slot k at ``buf[offs[k]:offs[k + 1]]``; ``arrays[name]`` is the slot's content, or an
    int: that many zeros (scratch: nothing to copy, the buffer starts zeroed)."""
    def size(a):
        return a if isinstance(a, (int, np.integer)) else np.asarray(a).size

    offs = np.zeros(len(names) + 1, np.int64)
    offs[1:] = np.cumsum([size(arrays[k]) for k in names])
    buf = np.zeros(max(int(offs[-1]), 1), dtype)
    for k, name in enumerate(names):
        a = arrays[name]
        if not isinstance(a, (int, np.integer)):
            buf[offs[k]:offs[k + 1]] = np.asarray(a).ravel()
    return buf, offs


def _rows_of(Lp, Li, n):
    """The entries of the n-column CSC pattern ``(Lp, Li)`` by rows, each row's in
    increasing column order: ``(ptr, col, pos)``, row r's entries k = ptr[r] .. ptr[r+1]-1
    at column col[k], value x[pos[k]] (the row form the forward solve reads of L,
    kernels/qdldl.ldl_solve, and the team's K x of K's upper triangle,
    kernels/kkt_parts.kkt_matvec_part)."""
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(Lp))
    pos = np.lexsort((cols, Li)).astype(np.int64)          # by row, then by column
    ptr = np.zeros(n + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(Li, minlength=n))
    return ptr, cols[pos], pos


def _gather_of(idx, T):
    """The scatter ``dst[idx[k]] += v_k`` (k = 0, 1, ...) as gathers: ``(ptr, order)``,
    target t's entries k = order[ptr[t]] .. order[ptr[t+1] - 1] in increasing k (the
    scatter's order, so a gather's sum is the scatter's bit for bit: the kernels' team
    form, kernels/kkt_parts.kkt_build_part)."""
    idx = np.asarray(idx, np.int64)
    ptr = np.zeros(int(T) + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(idx, minlength=int(T)))
    return ptr, np.argsort(idx, kind="stable").astype(np.int64)


def gather_int_slots(ints: dict, sz: dict) -> dict:
    """The gathers of the scatters the teams split (kernels/kkt_parts.kkt_build_part,
    kernels/slack_nlp.aty_part): the squares of each column's entries (COL_SQ_IDX, nw
    targets), of each constraint row's (JAC_ROWS, m), the private pivots' terms by row
    (PRIV_ROW, m), K's entries from their sources (KKT_MAP, nnzK), J^T y's terms by
    column (JAC_COLS, nw)."""
    out = {}
    for name, idx, T in (("COL_SQ", ints["COL_SQ_IDX"], sz["nw"]),
                         ("JAC_ROW", ints["JAC_ROWS"], sz["m"]),
                         ("PRIV_ROW", ints["PRIV_ROW"], sz["m"]),
                         ("KKT_MAP", ints["KKT_MAP"], sz["nnzK"]),
                         ("JAC_COL", ints["JAC_COLS"], sz["nw"])):
        out[f"{name}_PTR"], out[f"{name}_ORDER"] = _gather_of(idx, T)
    return out


def ldl_int_slots(Cp, Ci) -> dict:
    """The int slots of QDLDL's factorization and solve of the permuted upper-triangular
    pattern ``(Cp, Ci)`` (int64 CSC): L's pattern, the update schedule and L's row form
    (:func:`.kernels.qdldl.elimination_tree`, :func:`.kernels.qdldl.ldl_schedule`).
    Raises ValueError for a pattern that is not upper triangular."""
    from .kernels.qdldl import elimination_tree, ldl_schedule

    N = len(Cp) - 1
    etree, Lnz, work = (np.zeros(N, np.int64) for _ in range(3))
    nnzL = int(elimination_tree(N, Cp, Ci, work, Lnz, etree))
    if nnzL < 0:
        raise ValueError("the permuted KKT pattern is not upper triangular")
    Lp = np.zeros(N + 1, np.int64)
    Lp[1:] = np.cumsum(Lnz)
    Li, Rc, Rt = (np.zeros(nnzL, np.int64) for _ in range(3))
    Rp = np.zeros(N + 1, np.int64)
    ldl_schedule(N, Cp, Ci, etree, Lp, Li, Rp, Rc, Rt, *(np.zeros(N, np.int64)
                                                        for _ in range(4)))
    ints = dict(L_INDPTR=Lp, L_INDICES=Li, LDL_ROW_PTR=Rp, LDL_ROW_COL=Rc, LDL_ROW_POS=Rt)
    ints.update(zip(("L_ROW_PTR", "L_ROW_COL", "L_ROW_POS"), _rows_of(Lp, Li, N)))
    return ints


def bk_int_slots(Kp, Ki) -> dict:
    """The int slot of the dense Bunch-Kaufman factorization (:mod:`.kernels.bunch_kaufman`)
    of the upper-triangular pattern ``(Kp, Ki)`` (int64 CSC, N columns): BK_MAP, entry p
    at (row r, column c) going to ``r N + c``, its place in the column-major lower
    triangle."""
    N = len(Kp) - 1
    cols = np.repeat(np.arange(N, dtype=np.int64), np.diff(Kp))
    return dict(BK_MAP=np.asarray(Ki, np.int64) * N + cols)


def bk_float_sizes(N: int, dense: bool) -> dict:
    """The float slots of that factorization: the N x N matrix, the pivots, the diagonal's
    elimination masses (empty where K is factorized by QDLDL)."""
    n = int(N) if dense else 0
    return dict(BK_A=n * n, BK_PIV=n, BK_MASS=n)


class WorkspaceLayout:
    """Buffers and offsets of ``problem`` with the bound structure of (lbx, ubx, lbg, ubg)
    (full-length float arrays).  Raises :class:`.tape.Unsupported` for an expression the
    tape cannot express."""

    def __init__(self, problem, lbx, ubx, lbg, ubg, model=None):
        # (``model``: build_model(problem) where the caller has it)
        model = self.model = build_model(problem) if model is None else model
        n, m = model["n"], model["m"]
        if m == 0 and np.array_equal(lbx, ubx):
            # every variable fixed and no constraint: no KKT system at all (the general
            # path's solve, which IPOPT ends without an iteration)
            raise Unsupported("no free variable and no constraint")
        self.n, self.m, self.n_params = n, m, int(problem.n_params)
        self.sense = float(model["sense"])
        ints, floats, sz = build_structure(model, self.n_params, lbx, ubx, lbg, ubg,
                                           FILTER_CAP)
        ints.update(ldl_int_slots(ints["C_INDPTR"], ints["C_INDICES"]))
        sz["nnzL"] = len(ints["L_INDICES"])
        sz["dense_bk"] = int(small_pivoting(sz["nkkt"]))
        ints.update(bk_int_slots(ints["K_INDPTR"], ints["K_INDICES"]) if sz["dense_bk"]
                    else dict(BK_MAP=np.zeros(0, np.int64)))
        # K's upper triangle by rows (kernels/kkt_parts.kkt_matvec_part's U x, a row a lane)
        ints.update(zip(("K_ROW_PTR", "K_ROW_COL", "K_ROW_POS"),
                        _rows_of(ints["K_INDPTR"], ints["K_INDICES"], sz["nkkt"])))
        ints.update(gather_int_slots(ints, sz))
        self.sizes = sz
        ints.update(eval_int_slots(model))          # evaluator tables
        ints["SIZES"] = np.array([sz[f] for f in slots.SIZE_FIELDS], np.int64)
        # int scratch: the filter counters; the stop request (0 here: only a solve's own
        # copy of Ib is ever set, see compiled/solve.py); the team (no job, one lane)
        ints.update(FILTER_STATE=np.zeros(3, np.int64), STOP=np.zeros(1, np.int64),
                    TEAM=np.array([0, 1, 0], np.int64))
        self.Ib, self.IO = _pack(ints, slots.INT_SLOTS, np.int64)
        fl = {k: int(v) for k, v in self._float_sizes(model, sz).items()}
        fl.update(floats)
        fl.update(eval_float_slots(model, self.n_params))
        fl["FILTER"] = np.full(2 * FILTER_CAP, np.inf)
        self.Fb0, self.FO = _pack(fl, slots.FLOAT_SLOTS, np.float64)
        self._slices = {name: slice(int(self.FO[k]), int(self.FO[k + 1]))
                        for k, name in enumerate(slots.FLOAT_SLOTS)}
        # the slots with content (the rest of the template is zeros)
        self._content = [self._slices[k] for k, v in fl.items()
                         if not isinstance(v, (int, np.integer))]
        self._x_slot, self._p_slot = self._slices["X"], self._slices["P"]
        k = slots.INT_SLOTS.index("STOP")
        self._stop_slot = slice(int(self.IO[k]), int(self.IO[k + 1]))
        self.lower_idx, self.upper_idx = ints["LOWER_IDX"], ints["UPPER_IDX"]
        #: the same entries as slices where they are consecutive (the common case: a
        #: slice indexes in place, a fifth of an index array's cost per result)
        self.lower_sel, self.upper_sel = _selector(self.lower_idx), _selector(self.upper_idx)
        self.free_idx, self.fixed_idx = ints["FREE_IDX"], ints["FIXED_IDX"]

    @staticmethod
    def _float_sizes(model, sz):
        """Size of every float slot that is scratch or state (not a model constant)."""
        n, m, nw, ns = sz["n"], sz["m"], sz["nw"], sz["ns"]
        nL, nU, nj, nju, nh = sz["nL"], sz["nU"], sz["nj"], sz["nju"], sz["nh"]
        N, nnzK, nnzL = sz["nkkt"], sz["nnzK"], sz["nnzL"]
        return dict(
            # (the evaluator's slots: tape.eval_float_slots)
            # scaled slack problem
            G=m, OBJ_SCALE=1, CON_SCALE=m, G_OFFSET=m, GRAD_F=n, JAC_VALS=sz["nje"],
            JAC_SCALE=nju, LAMBDA=m, W_LOWER=nw, W_UPPER=nw, SLACK_SCALE=ns, LBG=m, UBG=m,
            # iterate
            W=nw, Y=m, ZL=nL, ZU=nU, F_CUR=1, H=m, GRAD_W=nw, JV=nj, HV=nh,
            # quantities scratch
            DUAL_RES=nw, SL=nL, SU=nU, SCRATCH=max(nw, m, N, 1), SL_TRIAL=nL, SU_TRIAL=nU,
            # KKT assembly and refinement
            K_VALUES=nnzK, K_STATIC=N, K_SOURCE=sz["nsrc"], EW=nw, EC=m,
            COL_SQ=sz["ncolsq"], PRIV_SUM=m, KKT_RHS=N, KKT_SOL=N, KKT_RES=N, KKT_CORR=N,
            KKT_KX=N, KKT_LOWER=N,
            # LDL factors
            C_VALUES=nnzK, L_VALUES=nnzL, LDL_D=N, LDL_DINV=N, LDL_YVALS=N, LDL_T=N,
            # direction, trial points, second-order correction, line-search state
            DW=nw, DY=m, DZL=nL, DZU=nU, GRAD_PHI=nw, RHS_W=nw, SIGMA=nw, RHS_C=m,
            W_TRIAL=nw, H_TRIAL=m, C_SOC=m, IC_STATE=slots.IC_STATE_SIZE, LS_STATE=LS_STATE_SIZE, DW_SOC=nw,
            DY_SOC=m, H_SOC=m, DZL_SOC=nL, DZU_SOC=nU, GRAD_W_NEW=nw, JV_NEW=nj,
            # fixed variables: the evaluator's Hessian before the gather of the kept
            # entries, the fixed variables' multipliers (minus the reduced gradient)
            HESS_RAW=sz["nhe"] if sz["nfix"] else 0, LAM_X_FIXED=sz["nfix"],
            # the line-search watchdog's stored iterate, direction and state
            WD_W=nw, WD_Y=m, WD_ZL=nL, WD_ZU=nU, WD_DW=nw, WD_DY=m, WD_DZL=nL, WD_DZU=nU,
            WD_GRAD_PHI=nw, WD_STATE=slots.WD_STATE_SIZE,
            # the iteration's starting state for a resumed general path
            RESUME=RESUME_FIXED_SIZE + 2 * FILTER_CAP,
            # the latest acceptable iterate [w | y | zL | zU] (a resumed general path's
            # fall-back)
            ACCEPTABLE=nw + m + nL + nU,
            # a warm start's multipliers as given (CasADi's convention)
            LAM_G0=m, LAM_X0=n,
            # a square problem's multipliers while its feasibility multipliers are tried
            SAVED_MULTS=m + nL + nU,
            # a small K's dense Bunch-Kaufman factors (kernels/bunch_kaufman.py)
            **bk_float_sizes(N, sz["dense_bk"]),
            # a team job's scalar arguments, its lanes' partial results (kernels/team.py)
            TEAM_ARGS=8, TEAM_PARTIALS=PARTIALS * MAX_LANES,
            # the barrier function's terms at a point: log s_L, log s_U, the damped
            # slacks; a direction's |h| (kernels/step_parts.py)
            BARRIER_TERMS=max(2 * (nL + nU), m))

    def new_workspace(self):
        """A float workspace for one solve in flight: the template's values (zeros but
        in the slots with content, copied: a large problem's scratch is most of it)."""
        Fb = np.zeros_like(self.Fb0)
        for sl in self._content:
            Fb[sl] = self.Fb0[sl]
        return Fb

    def float_slice(self, name: str) -> slice:
        """The entries of float slot ``name`` in a float workspace."""
        return self._slices[name]

    def float_views(self, Fb, names=("X", "G", "Y", "ZL", "ZU", "CON_SCALE", "OBJ_SCALE",
                                     "LAM_X_FIXED")):
        """{slot name: view of that float slot in ``Fb``} for ``names``."""
        return {k: Fb[self._slices[k]] for k in names}

    def x_of(self, Fb):
        """The view of slot F_X (the solution after a solve) in ``Fb``."""
        return Fb[self._x_slot]

    def p_of(self, Fb):
        """The view of slot F_P (the parameters) in ``Fb``."""
        return Fb[self._p_slot]

    def stop_of(self, Ib):
        """The view of int slot I_STOP (the stop request, :mod:`.kernels.ipm`) in ``Ib``."""
        return Ib[self._stop_slot]

    def stop_slots(self, Iall):
        """The view of slot I_STOP in every row of ``Iall`` (k, LI): a CPU batch's int
        arrays (:class:`.thread_workspaces.ThreadWorkspaces`)."""
        return Iall[:, self._stop_slot]


def _selector(idx: np.ndarray):
    """``idx`` (int64 indices) as ``slice(a, b)`` when it is ``a, a + 1, ..., b - 1`` (or
    empty), else ``idx`` itself: either selects the same entries in the same order."""
    if len(idx) == 0:
        return slice(0, 0)
    a = int(idx[0])
    if np.array_equal(idx, np.arange(a, a + len(idx))):
        return slice(a, a + len(idx))
    return idx
