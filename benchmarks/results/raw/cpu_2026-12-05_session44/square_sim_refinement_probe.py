import sys, runpy, numpy as np
import caspar_backend.kkt.augmented as AUG
orig = AUG.refine
calls = []
def refine(xp, b, x, residual, correct, max_steps, ratio_max, regularized):
    r = orig(xp, b, x, residual, correct, max_steps, ratio_max, regularized)
    res = residual(x)
    calls.append((r[0], r[1], float(np.max(np.abs(b))), float(np.max(np.abs(res))), float(np.max(np.abs(x)))))
    return r
AUG.refine = refine
import caspar_backend.solver.inertia as IN
od = IN.InertiaCorrector.direction
def direction(self, rw, rc):
    n0 = len(calls)
    out = od(self, rw, rc)
    k = self.kkt
    print('dir: solves', len(calls) - n0, ['ratio %.1e rho %.2f |b| %.1e |res| %.1e |x| %.1e' % c for c in calls[n0:]], 'eps %.1e dw %.1e dc %.1e' % (k.static_regularization, k.delta_w, k.delta_c))
    return out
IN.InertiaCorrector.direction = direction
sys.argv = ['sim_cmp.py', 'dae_reaction_sim', '0']
runpy.run_path('/tmp/pyomo_examples/sim_cmp.py', run_name='__main__')
