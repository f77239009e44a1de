import sys, os, warnings, numpy as np
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__))); 
import bk_instr
import caspar_backend.linsolve.qdldl as q
import caspar_backend.linsolve.bunch_kaufman as B
q._build_kernel_tables = lambda s, dense: False
B.HostBunchKaufman = bk_instr.HostBunchKaufman
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar, run_ipopt
from tests.solver.test_hs_extra import PROBLEMS
probs = {p.name: p for p in bank(include_slow=False)}
probs.update(PROBLEMS)
names = sys.argv[1].split(',') if len(sys.argv) > 1 and sys.argv[1] != 'all' else list(probs)
for name in names:
    p = probs[name]
    d = dict(p.build(), options=p.options)
    bk_instr.RATIOS.clear()
    rc = run_caspar(d, {'compiled_path': 'no'})
    r = np.array(bk_instr.RATIOS)
    if len(r) == 0: continue
    ri = run_ipopt(d, {})
    tag = '' if (ri['status'] == rc.status and ri['iter'] == rc.iterations) else f"  MISS ipopt {ri['iter']}"
    print(f"{name:30s} it {rc.iterations:4d} min {r.min():.2e} #<1e-14 {np.sum(r < 1e-14)} #<1e-12 {np.sum(r < 1e-12)} #<1e-10 {np.sum(r<1e-10)}{tag}")
