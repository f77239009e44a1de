# package: kernel call alone vs solve_compiled's Python around it (same process)
import time, sys
import numpy as np
sys.path.insert(0, "/work/wt_compiled/prototypes/compiled_ipm")
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled import solve_compiled
from caspar_backend.compiled.solve import layout_for, _thread_buffers
from caspar_backend.compiled.options import option_vector, resolve
from caspar_backend.compiled.kernels.ipm import solve_instance
from proto.builder import SmallSolver
nlp, b = arm_ik()
pr = caspar_backend.from_casadi(nlp, **b)
x0 = np.array([0.1, 0.2, 0.3]); T = arm_targets(200)
s = SmallSolver(pr, b['lbx'], b['ubx'], b['lbg'], b['ubg'])
full = lambda k: np.broadcast_to(np.asarray(b[k], float), (pr.n if k[-1] == 'x' else pr.m,)).copy()
lbx, ubx, lbg, ubg = (full(k) for k in ("lbx", "ubx", "lbg", "ubg"))
solve_compiled(pr, x0, T[0], print_level=0)
lay = layout_for(pr, lbx, ubx, lbg, ubg); Fb, Ib = _thread_buffers(lay)
O = option_vector(resolve(dict(print_level=0))[0])
tk, tw, tp, to = [], [], [], []
for t in T:
    a = time.perf_counter(); lay.p_of(Fb)[:] = t; solve_instance(Fb, lay.FO, Ib, lay.IO, O, x0, lbx, ubx, lbg, ubg); tk.append(time.perf_counter() - a)
    a = time.perf_counter(); s.solve(x0, t); tp.append(time.perf_counter() - a)
    a = time.perf_counter(); solve_compiled(pr, x0, t, print_level=0); tw.append(time.perf_counter() - a)
    a = time.perf_counter(); resolve(dict(print_level=0)); to.append(time.perf_counter() - a)
m = lambda v: np.median(v) * 1e6
print(f"kernel alone {m(tk):.0f} us | prototype solve {m(tp):.0f} us | solve_compiled {m(tw):.0f} us | resolve_options {m(to):.0f} us")
