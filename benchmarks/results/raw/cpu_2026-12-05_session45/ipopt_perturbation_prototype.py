"""PROTOTYPE (general path only): IPOPT's PDPerturbationHandler state machine in place of
caspar's Algorithm IC with delta_c kept for good once needed.  Import before solving."""
import caspar_backend.solver.inertia as INR

NYD, NOT, DEG = 0, 1, 2
NO_TEST, T00, TC0, T0X, TCX = 0, 1, 2, 3, 4
IC = INR.InertiaCorrector
_orig_init = IC.__init__


def __init__(self, *a, **kw):
    _orig_init(self, *a, **kw)
    self.hess_deg, self.jac_deg = NYD, (NOT if self.delta_c_used else NYD)
    self.degen_iters, self.test = 0, NO_TEST
    self.dx_curr, self.dc_curr = 0.0, 0.0
    self.always_cd = bool(self.delta_c_used)


def _finalize(self):
    t = self.test
    if t == NO_TEST:
        return
    if t == T00:
        if self.hess_deg == NYD and self.jac_deg == NYD:
            self.hess_deg = self.jac_deg = NOT
        elif self.hess_deg == NYD:
            self.hess_deg = NOT
        elif self.jac_deg == NYD:
            self.jac_deg = NOT
    elif t == TC0:
        if self.hess_deg == NYD:
            self.hess_deg = NOT
        if self.jac_deg == NYD:
            self.degen_iters += 1
            if self.degen_iters >= 3:
                self.jac_deg = DEG
    elif t == T0X:
        if self.jac_deg == NYD:
            self.jac_deg = NOT
        if self.hess_deg == NYD:
            self.degen_iters += 1
            if self.degen_iters >= 3:
                self.hess_deg = DEG
    elif t == TCX:
        self.degen_iters += 1
        if self.degen_iters >= 3:
            self.hess_deg = self.jac_deg = DEG


def _wrong_inertia_deltas(self):
    o = self.opts
    if self.dx_curr == 0.0:
        self.dx_curr = (o.first_hessian_perturbation if self.delta_w_last == 0.0 else
                        max(o.min_hessian_perturbation, self.delta_w_last * o.perturb_dec_fact))
    elif self.delta_w_last == 0.0 or 1e5 * self.delta_w_last < self.dx_curr:
        self.dx_curr *= o.perturb_inc_fact_first
    else:
        self.dx_curr *= o.perturb_inc_fact
    if self.dx_curr > o.max_hessian_perturbation:
        self.delta_w_last = 0.0
        return False
    return True


def _for_singularity(self):
    if self.hess_deg == NYD or self.jac_deg == NYD:
        t = self.test
        if t == T00:
            if self.jac_deg == NYD:
                self.dc_curr = self._delta_c()
                self.test = TC0
            else:
                if not self._wrong_inertia_deltas():
                    return False
                self.test = T0X
        elif t == TC0:
            if not self.always_cd:
                self.dc_curr = 0.0
                if not self._wrong_inertia_deltas():
                    return False
                self.test = T0X
            else:
                if not self._wrong_inertia_deltas():
                    return False
                self.test = TCX
        elif t == T0X:
            self.dc_curr = self._delta_c()
            if not self._wrong_inertia_deltas():
                return False
            self.test = TCX
        elif t == TCX:
            if not self._wrong_inertia_deltas():
                return False
    else:
        if self.dc_curr > 0.0:
            if not self._wrong_inertia_deltas():
                return False
        else:
            self.dc_curr = self._delta_c()
    return True


def _for_wrong_inertia(self):
    self._finalize()
    ok = self._wrong_inertia_deltas()
    if not ok and self.dc_curr == 0.0:
        self.dc_curr = self._delta_c()
        self.dx_curr = 0.0
        self.test = NO_TEST
        if self.hess_deg == DEG:
            self.hess_deg = NYD
        ok = self._wrong_inertia_deltas()
    return ok


def regularize_and_factorize(self, singular=False):
    k = self.kkt
    # ConsiderNewSystem
    self._finalize()
    if self.dx_curr > 0.0:
        self.delta_w_last = self.dx_curr
    self.test = T00 if (self.hess_deg == NYD or self.jac_deg == NYD) else NO_TEST
    if self.always_cd:
        self.test = TC0 if self.test != NO_TEST else NO_TEST
    self.dc_curr = self._delta_c() if (self.jac_deg == DEG or self.always_cd) else 0.0
    self.dx_curr = 0.0
    if self.hess_deg == DEG:
        if not self._wrong_inertia_deltas():
            return False
    first = True
    while True:
        k.delta_w, k.delta_c = self.dx_curr, self.dc_curr
        self.info.delta_w = self.dx_curr
        if singular and first:
            sing, wrong = True, True
        else:
            fact, ok = self.factor()
            if ok:
                self.info.delta_w = k.delta_w
                return True
            sing = fact.n_zero > 0 or fact.n_neg < self.m
            wrong = True
        first = False
        if sing and self.m > 0:
            if not self._for_singularity():
                return False
        else:
            if not self._for_wrong_inertia():
                return False


IC.__init__ = __init__
IC._finalize = _finalize
IC._wrong_inertia_deltas = _wrong_inertia_deltas
IC._for_singularity = _for_singularity
IC._for_wrong_inertia = _for_wrong_inertia
IC.regularize_and_factorize = regularize_and_factorize
