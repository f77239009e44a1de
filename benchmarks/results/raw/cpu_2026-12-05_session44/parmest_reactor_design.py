import casadi as ca, numpy as np, warnings, sys
warnings.simplefilter('ignore')
from caspar_backend.casadi import nlpsol
x = ca.SX.sym('x', 7); k1, k2, k3, A, B, C, D = [x[i] for i in range(7)]
sv, caf = 1.05, 10000.0
g = ca.vertcat(sv*caf - sv*A - k1*A - 2.0*k3*A**2, -sv*B + k1*A - k2*B, -sv*C + k2*B, -sv*D + k3*A**2)
nlp = {'x': x, 'f': -B, 'g': g}
a = dict(x0=[5/6, 5/3, 1/6000, 5000, 2000, 2000, 1000], lbx=0, ubx=ca.inf, lbg=0, ubg=0)
lvl = int(sys.argv[1]) if len(sys.argv) > 1 else 0
S = ca.nlpsol('S', 'ipopt', nlp, {'print_time': 0, 'ipopt.print_level': lvl, 'ipopt.sb': 'yes', 'ipopt.max_iter': int(sys.argv[2]) if len(sys.argv) > 2 else 3000})
S(**a); print('ipopt', S.stats()['return_status'], S.stats()['iter_count'])
for ls, cp in (('qdldl', 'no'), ('qdldl', 'yes'), ('pardisomkl', 'auto')):
    C = nlpsol('C', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': lvl, 'linear_solver': ls, 'compiled_path': cp, 'max_iter': int(sys.argv[2]) if len(sys.argv) > 2 else 3000}})
    C(**a); print('caspar', ls, cp, C.stats()['return_status'], C.stats()['iter_count'])
