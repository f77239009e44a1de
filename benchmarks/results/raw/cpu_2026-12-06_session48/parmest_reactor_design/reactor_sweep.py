import casadi as ca, numpy as np, warnings, sys, time
warnings.simplefilter('ignore')
from caspar_backend.casadi import nlpsol
for sv in [1.05, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9]:
    x = ca.SX.sym('x', 7); k1, k2, k3, A, B, C, D = [x[i] for i in range(7)]
    caf = 10000.0
    g = ca.vertcat(sv*caf - sv*A - k1*A - 2.0*k3*A**2, -sv*B + k1*A - k2*B, -sv*C + k2*B, -sv*D + k3*A**2)
    nlp = {'x': x, 'f': -B, 'g': g}
    a = dict(x0=[5/6, 5/3, 1/6000, 5000, 2000, 2000, 1000], lbx=0, ubx=ca.inf, lbg=0, ubg=0)
    out = []
    for name, mk in (("ipopt", lambda: ca.nlpsol('I', 'ipopt', nlp, {'print_time': 0, 'ipopt': {'print_level': 0}})),
                     ("caspar", lambda: nlpsol('C', 'caspar', nlp, {'print_time': 0, 'caspar': {'print_level': 0}}))):
        S = mk(); t = time.perf_counter(); r = S(**a); dt = time.perf_counter() - t
        st = S.stats(); out.append(f"{name} {st['return_status'][:18]:18s} {st['iter_count']:5d} f={float(r['f']):.8g} {dt:.2f}s")
    print(sv, " | ".join(out), flush=True)
