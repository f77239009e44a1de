import os, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np
from benchmarks.models import cops
import caspar_backend as cb
from caspar_backend.compiled.tape import build_model
from caspar_backend.compiled.kernels import slots
from caspar_backend.compiled.workspace_layout import _pack
from caspar_backend.compiled.kernels.tape_eval import ev_zeroth, ev_first, ev_hess
name = sys.argv[1] if len(sys.argv) > 1 else 'glider'
if name.startswith('case'):
    from benchmarks.models.acopf import acopf_casadi; nlp, args = acopf_casadi(name); args.pop('data')
    P = cb.from_casadi(nlp)
else:
    m = getattr(cops, name)()
    P = cb.from_pyomo(m)
t=time.perf_counter(); model = build_model(P); print('build_model', time.perf_counter()-t)
n, mm = model['n'], model['m']
ints = dict(GROUPS=model["gt"], TAPE_OP=model["op"], TAPE_ARG=model["arg"], TAPE_OUT=model["outs"], VAR_TABLE=model["vt"], PARAM_TABLE=model["pt"], CON_ROWS=model["rows"], GRAD_IDX=model["grad_idx"], TERM_ROWS=model["term_rows"], ACC_ROWS=model["acc_rows"], JAC_MAP=model["jac_map"])
ints["EVAL_SIZES"] = np.array([n, mm, model["nobj"], len(model["gt"]), int(model["has_jac_map"]), model["chunk"]], np.int64)
ints = {k: ints.get(k, 0) for k in slots.INT_SLOTS}
Ib, IO = _pack(ints, slots.INT_SLOTS, np.int64)
fl = dict(REGISTERS=model["max_tape"] * model["chunk"], OBJ_TERMS=model["max_instances"], X=n, P=P.n_params, GRAD_BUF=len(model["grad_idx"]), CON_TERMS=len(model["term_rows"]), JAC_RAW=model["nraw"], ROW_ACC=mm, TAPE_CONST=model["cval"], DATA_TABLE=model["dt"])
fl = {k: fl.get(k, 0) for k in slots.FLOAT_SLOTS}
Fb, FO = _pack(fl, slots.FLOAT_SLOTS, np.float64)
k = slots.FLOAT_SLOTS.index('X'); xs = Fb[FO[k]:FO[k+1]]
k = slots.FLOAT_SLOTS.index('P'); ps = Fb[FO[k]:FO[k+1]]
ev = P.evaluator('cpu')
rng = np.random.default_rng(0)
x = np.array(P.x0 if hasattr(P,'x0') else np.zeros(n), float) + 0.1*rng.random(n)
xs[:] = x; ps[:] = ev.parameters()
lam = rng.random(mm)
g1 = np.zeros(mm); t=time.perf_counter(); f1 = ev_zeroth(Fb, FO, Ib, IO, g1); print('first call', time.perf_counter()-t)
gr = np.zeros(n); jv = np.zeros(ev.nnz_jac); ev_first(Fb, FO, Ib, IO, gr, jv)
hv = np.zeros(ev.nnz_hess); ev_hess(Fb, FO, Ib, IO, lam, 1.0, hv)
print('f', f1, ev.obj(x), 'g', np.abs(g1-ev.cons(x)).max(), 'grad', np.abs(gr-ev.grad(x)).max(), 'jac', np.abs(jv-ev.jac_values(x)).max(), 'hess', np.abs(hv-ev.hess_values(x, lam, 1.0)).max())
def tm(f, k=200):
    f(); t=time.perf_counter()
    for _ in range(k): f()
    return (time.perf_counter()-t)/k*1e6
print('us zeroth tape %.1f numpy %.1f' % (tm(lambda: ev_zeroth(Fb, FO, Ib, IO, g1)), tm(lambda: (ev.obj(x), ev.cons(x, g1)))))
print('us first tape %.1f numpy %.1f' % (tm(lambda: ev_first(Fb, FO, Ib, IO, gr, jv)), tm(lambda: (ev.grad(x, gr), ev.jac_values(x, jv)))))
print('us hess tape %.1f numpy %.1f' % (tm(lambda: ev_hess(Fb, FO, Ib, IO, lam, 1.0, hv)), tm(lambda: ev.hess_values(x, lam, 1.0, hv))))
