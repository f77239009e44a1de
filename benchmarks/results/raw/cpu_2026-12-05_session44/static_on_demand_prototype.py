"""Prototype (not on main): the static term on demand -- none first, 1e-9 where a factorization meets a zero pivot (for that iteration)."""
import caspar_backend.kkt.augmented as AUG
M = AUG.AugmentedKKT
def increase_quality(self):
    if self.solver.perturbs_pivots and self.enable_pivoting():
        return True
    eps = self.static_regularization
    if eps >= self.STATIC_REGULARIZATION_MAX:
        return False
    self.static_regularization = 1e-9 if eps <= 0.0 else min(10.0 * eps, self.STATIC_REGULARIZATION_MAX)
    return True
M.increase_quality = increase_quality
