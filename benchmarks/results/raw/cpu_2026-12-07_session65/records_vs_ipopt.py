import os
import sys

import casadi as ca
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../.."))
from caspar_backend.casadi import nlpsol
which = sys.argv[1]
os.chdir(which)
x = ca.SX.sym("x", 3); p = ca.SX.sym("p")
nlp = {"x": x, "p": p, "f": (x[0] - x[1]) ** 2 + p * x[2] ** 2, "g": ca.vertcat(x[0] + x[1], x[2] + x[0])}
opts = {"specific_options": {"nlp_f": {"final_options": {"dump_in": True, "dump_out": True}},
                             "nlp_grad_f": {"final_options": {"dump_out": True}},
                             "nlp_jac_g": {"final_options": {"dump_out": True}},
                             "nlp_grad": {"final_options": {"dump_in": True}}},
        "print_time": False}
if which == "ip":
    S = ca.nlpsol("S", "ipopt", nlp, {**opts, "ipopt.print_level": 0, "ipopt.sb": "yes"})
else:
    S = nlpsol("S", "caspar", nlp, {**opts, "caspar.print_level": 0})
r = S(x0=[1, 2, 1], p=2.0, lbg=1, ubg=ca.inf)
print(which, float(r["f"]), S.stats()["iter_count"])
