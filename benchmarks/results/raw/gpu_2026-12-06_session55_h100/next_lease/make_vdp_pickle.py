import sys, os, pickle, lzma
root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
import caspar_backend as cb
assert cb.__file__.startswith(root)
from benchmarks.bench_batch import vdp_workload
from caspar_backend.batch.inputs import batch_inputs
from caspar_backend.compiled.cuda.group import group_layout, _resolve_options
from caspar_backend.compiled.options import option_vector
w = vdp_workload(1000)
wk = vdp_workload(2)
P = cb.from_casadi(wk.nlp, **wk.args)
sub = batch_inputs(P, 1000, p=w.params)
lay = group_layout(P, sub)
opts, why = _resolve_options({"tol": 1e-8, "print_level": 0}, clocked=False)
blob = pickle.dumps(dict(lay=lay, x0=sub.x0, p=sub.p, lbx=sub.lbx, ubx=sub.ubx, lbg=sub.lbg,
                         ubg=sub.ubg, O=option_vector(opts)))
open(out, 'wb').write(lzma.compress(blob))
print(out, os.path.getsize(out))
