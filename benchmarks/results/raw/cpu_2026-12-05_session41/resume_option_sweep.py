"""Session 41 (the kernels' warm start): session 40's sweep (the bank x option sets, compiled_path 'no' against 'yes')
with the start options added and every difference counted (exp models too: the general
path's tape evaluator)."""
import sys, os, numpy as np, io
sys.path.insert(0, os.getcwd())
from tests.compiled.test_dispatch import _bank_problem, BANK
import caspar_backend.compiled.solve as cs
seen=[]; accs=[]
orig=cs.resume_point
def rp(*a):
    r=orig(*a); seen.append(r is not None); accs.append(0 if r is None else r.acceptable_count); return r
cs.resume_point=rp
OPTS=[dict(), dict(mu_init=1e-3), dict(bound_relax_factor=0.0), dict(max_iter=20), dict(tol=1e-10), dict(watchdog_shortened_iter_trigger=3), dict(kappa_d=0.0), dict(print_level=5, print_frequency_iter=2), dict(acceptable_tol=1e-2, acceptable_iter=1000, acceptable_obj_change_tol=1e20), dict(least_square_init_duals=True), dict(warm_start_init_point=True, warm_start_bound_push=1e-6), dict(warm_start_init_point=True), dict(warm_start_init_point=True, warm_start_mult_init_max=10.0, warm_start_bound_frac=0.1), dict(start_with_resto=True)]
bad=0; resumed=0; total=0
for name in sorted(BANK):
    P,d=_bank_problem(name)
    for o in OPTS:
        o=dict(o); o.update(dict(BANK[name].options))
        pl = o.pop('print_level', 0)
        seen.clear()
        s1, s2 = io.StringIO(), io.StringIO()
        try:
            a=P.solve(d["x0"], compiled_path='no', print_level=pl, stream=s1, **o)
            b=P.solve(d["x0"], compiled_path='yes', print_level=pl, stream=s2, **o)
        except Exception as e:
            print(name, o, 'ERR', type(e).__name__, e); bad+=1; continue
        total+=1
        if any(seen): resumed+=1
        la=[l for l in s1.getvalue().splitlines() if not l.startswith('Total seconds') and 'compiled_path' not in l and not l.strip().startswith('stream')]
        lb=[l for l in s2.getvalue().splitlines() if not l.startswith('Total seconds') and 'compiled_path' not in l and not l.strip().startswith('stream')]
        same=(a.status==b.status and a.iterations==b.iterations and np.array_equal(a.x,b.x) and a.counts==b.counts and la==lb)
        if not same:
            bad+=1
            print('DIFF', name, o, a.status, a.iterations, b.status, b.iterations, np.max(np.abs(a.x-b.x)) if a.x.size else 0, a.counts==b.counts, la==lb)
print('total', total, 'resumed', resumed, 'bad', bad)
print('points with an acceptable count', sum(1 for a in accs if a > 0), 'of', len(accs))
