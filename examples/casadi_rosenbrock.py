"""CasADi: switch ``casadi.nlpsol(..., 'ipopt', ...)`` to caspar by changing one import.

    python examples/casadi_rosenbrock.py
"""

import casadi as ca

from caspar_backend.casadi import nlpsol  # instead of: from casadi import nlpsol

x = ca.SX.sym("x", 2)
p = ca.SX.sym("p")
nlp = {"x": x, "p": p, "f": (1 - x[0]) ** 2 + p * (x[1] - x[0] ** 2) ** 2, "g": x[0] + x[1]}
S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {"tol": 1e-10, "print_level": 0}})
sol = S(x0=[-1.2, 1.0], p=100, lbg=-10, ubg=1)
print(S.stats()["return_status"], sol["x"], sol["f"], sol["lam_g"])

# the solver is a casadi.Function: differentiate the solution with respect to p
P = ca.MX.sym("P")
dxdp = ca.Function("dxdp", [P], [ca.jacobian(S(x0=[-1.2, 1.0], p=P, lbg=-10, ubg=1)["x"], P)])
print("dx*/dp =", dxdp(100))
