import casadi as ca, numpy as np, warnings, sys
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import bk_instr
import caspar_backend.linsolve.qdldl as q
import caspar_backend.linsolve.bunch_kaufman as B
q._build_kernel_tables = lambda s, dense: False
B.HostBunchKaufman = bk_instr.HostBunchKaufman
from caspar_backend.casadi import nlpsol
for sv in [1.05, 1.3, 1.9]:
    x = ca.SX.sym('x', 7); k1, k2, k3, A, Bb, C, D = [x[i] for i in range(7)]
    caf = 10000.0
    g = ca.vertcat(sv*caf - sv*A - k1*A - 2.0*k3*A**2, -sv*Bb + k1*A - k2*Bb, -sv*C + k2*Bb, -sv*D + k3*A**2)
    nlp = {'x': x, 'f': -Bb, 'g': g}
    a = dict(x0=[5/6, 5/3, 1/6000, 5000, 2000, 2000, 1000], lbx=0, ubx=ca.inf, lbg=0, ubg=0)
    bk_instr.RATIOS.clear()
    S = nlpsol('C', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': 0, 'compiled_path': 'no'}})
    S(**a); r = np.sort(bk_instr.RATIOS); print(sv, S.stats()['iter_count'], r[:4])
