# Minimal reproducer: CasADi race_car example (Opti), IPOPT vs caspar iteration count.
# usage: python repro_race_car.py [ipopt|caspar] [print_level]
import sys
import casadi as ca
from numpy import pi
from caspar_backend.casadi import Opti

which = sys.argv[1] if len(sys.argv) > 1 else "both"
pl = int(sys.argv[2]) if len(sys.argv) > 2 else 0

def build(cls):
    N = 100
    opti = cls()
    X = opti.variable(2, N + 1); pos = X[0, :]; speed = X[1, :]
    U = opti.variable(1, N); T = opti.variable()
    opti.minimize(T)
    f = lambda x, u: ca.vertcat(x[1], u - x[1])
    dt = T / N
    for k in range(N):
        k1 = f(X[:, k], U[:, k]); k2 = f(X[:, k] + dt / 2 * k1, U[:, k])
        k3 = f(X[:, k] + dt / 2 * k2, U[:, k]); k4 = f(X[:, k] + dt * k3, U[:, k])
        opti.subject_to(X[:, k + 1] == X[:, k] + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    opti.subject_to(speed <= 1 - ca.sin(2 * pi * pos) / 2)
    opti.subject_to(opti.bounded(0, U, 1))
    opti.subject_to(pos[0] == 0); opti.subject_to(speed[0] == 0); opti.subject_to(pos[-1] == 1)
    opti.subject_to(T >= 0)
    opti.set_initial(speed, 1); opti.set_initial(T, 1)
    return opti, T

for name in (["ipopt", "caspar"] if which == "both" else [which]):
    opti, T = build(ca.Opti if name == "ipopt" else Opti)
    opti.solver(name, {"print_time": False}, {"print_level": pl})
    sol = opti.solve()
    st = sol.stats()
    print(f"{name:7s} status={st['return_status']} iter={st['iter_count']} T={sol.value(T):.12g}")
