import numpy as np
from caspar_backend import Graph, NLPModel, Problem
import casadi as ca
g = Graph(); x = [g.var(0), g.var(1), g.var(2)]
obj = x[0]**2 + x[1]**2 + (x[2]-1)**2
cons = [x[0] + x[1], x[0] + x[1], x[0]*x[2] + x[1]]
pr = Problem(NLPModel(g, obj, cons, np.full(3, -np.inf), np.full(3, np.inf), np.array([1.,1., 0.5]), np.array([1.,1.,0.5]), x0=np.array([0.3,0.2,0.1])))
for ls in ["qdldl", "pardisomkl"]:
    r = pr.solve(print_level=0, linear_solver=ls, compiled_path="no")
    print(ls, r.status, r.iterations, r.f, r.x)
X = ca.SX.sym("x", 3)
S = ca.nlpsol("s", "ipopt", {"x": X, "f": X[0]**2+X[1]**2+(X[2]-1)**2, "g": ca.vertcat(X[0]+X[1], X[0]+X[1], X[0]*X[2]+X[1])}, {"print_time": 0, "ipopt.print_level": 0})
r = S(x0=[0.3,0.2,0.1], lbg=[1,1,0.5], ubg=[1,1,0.5]); print("ipopt", S.stats()["return_status"], S.stats()["iter_count"], float(r["f"]), np.array(r["x"]).ravel())
