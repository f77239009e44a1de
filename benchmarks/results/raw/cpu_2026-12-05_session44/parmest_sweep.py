import casadi as ca, numpy as np, warnings, sys
warnings.simplefilter('ignore')
import caspar_backend.linsolve.qdldl as Q
of, osv, omv = Q.QDLDLSolver.factorize, Q.QDLDLSolver.solve, Q.QDLDLSolver.matvec
def _rc(self):
    st = self.structure
    cols = np.repeat(np.arange(st.n), np.diff(st.indptr))
    return np.asarray(st.indices), cols
def factorize(self, values):
    rows, cols = _rc(self)
    v = np.abs(np.asarray(values))
    d = np.ones(self.structure.n)
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
        s = v * d[rows] * d[cols]
        m = np.zeros(self.structure.n)
        np.maximum.at(m, rows, s); np.maximum.at(m, cols, s)
        m[m == 0] = 1.0
        d = d / np.sqrt(m)
    self._sc = d
    return of(self, np.asarray(values) * d[rows] * d[cols])
def solve(self, rhs, out=None):
    d = self._sc
    x = osv(self, np.asarray(rhs) * d) * d
    if out is None: return x
    out[:] = x; return out
def matvec(self, x, out=None):
    d = self._sc
    y = omv(self, np.asarray(x) / d) / d
    if out is None: return y
    out[:] = y; return out
if sys.argv[1] == 'scaled':
    Q.QDLDLSolver.factorize, Q.QDLDLSolver.solve, Q.QDLDLSolver.matvec = factorize, solve, matvec
    Q.QDLDLSolver.solve_add = lambda self, rhs, x: x.__iadd__(self.solve(rhs))
from caspar_backend.casadi import nlpsol
res = []
for sv in [1.05, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9]:
    x = ca.SX.sym('x', 7); k1, k2, k3, A, B, C, D = [x[i] for i in range(7)]
    caf = 10000.0
    g = ca.vertcat(sv*caf - sv*A - k1*A - 2.0*k3*A**2, -sv*B + k1*A - k2*B, -sv*C + k2*B, -sv*D + k3*A**2)
    nlp = {'x': x, 'f': -B, 'g': g}
    a = dict(x0=[5/6, 5/3, 1/6000, 5000, 2000, 2000, 1000], lbx=0, ubx=ca.inf, lbg=0, ubg=0)
    C = nlpsol('C', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': 0, 'kkt_static_regularization': 0.0}})
    C(**a); c = (C.stats()['return_status'][:5], C.stats()['iter_count'])
    res.append((sv, c))
print(sys.argv[1:], res)
