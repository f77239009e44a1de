import time, sys
import casadi as ca, numpy as np
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
# rocket: state (position, velocity, mass), control thrust; Euler steps via nested MX Functions
x = ca.MX.sym("x", 3); u = ca.MX.sym("u")
dt = 10.0 / N
ode = ca.vertcat(x[1], (u - 0.05 * x[1] ** 2) / x[2], -0.1 * u ** 2)
F = ca.Function("F", [x, u], [x + dt * ode])          # one Euler step
U = ca.MX.sym("U", N)
X = ca.DM([0, 0, 1])
Xk = ca.MX(X)
for k in range(N):
    Xk = F(Xk, U[k])
nlp = {"x": U, "f": ca.sumsqr(U) * dt, "g": ca.vertcat(Xk[0], Xk[1])}
lbg, ubg = [10, 0], [10, 0]
opts_i = {"ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes"}
t = time.time(); S = ca.nlpsol("S", "ipopt", nlp, opts_i); tb = time.time() - t
t = time.time(); r = S(x0=0.4, lbx=-1, ubx=1, lbg=lbg, ubg=ubg); ts = time.time() - t
print(f"IPOPT N={N}: build {tb:.2f} s solve {ts:.2f} s {S.stats()['return_status']} it {S.stats()['iter_count']} f {float(r['f']):.10g}")
from caspar_backend.casadi import nlpsol
t = time.time(); C = nlpsol("C", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0}}); tb = time.time() - t
t = time.time(); r = C(x0=0.4, lbx=-1, ubx=1, lbg=lbg, ubg=ubg); ts = time.time() - t
print(f"caspar N={N}: build {tb:.2f} s solve {ts:.2f} s {C.stats()['return_status']} it {C.stats()['iter_count']} f {float(r['f']):.10g}")
