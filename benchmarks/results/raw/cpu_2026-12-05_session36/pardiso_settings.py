import numpy as np, scipy.sparse as sp, sys, itertools
sys.path.insert(0, "/work/main")
from tests.kkt.test_linear_solvers import _saddle_upper
from tests.kkt.test_pardiso_mkl import _structure, _random_kkt_upper
from caspar_backend.linsolve import pardiso_mkl as pm
orig = pm.PardisoMKLSolver._init_parameters
def run(cfg, k, up):
    def init(self):
        orig(self)
        for i, v in cfg.items(): self._iparm[i] = v
    pm.PardisoMKLSolver._init_parameters = init
    s = pm.PardisoMKLSolver(); s.analyse(_structure(up))
    f = s.factorize(up.data)
    b = np.random.default_rng(3).standard_normal(k.shape[0])
    x = s.solve(b)
    return f.inertia, int(s._iparm[13]), np.abs(k@x-b).max()
mats = [_saddle_upper(900, 700), _saddle_upper(3000, 2000, seed=4)]
for cfg in [{20:1}, {20:1, 9:8}, {20:1, 10:0, 12:0}, {20:1, 7:0}, {20:1, 7:3}]:
    print(cfg, [run(cfg, *m) for m in mats])
