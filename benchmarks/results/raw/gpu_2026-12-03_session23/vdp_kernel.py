"""Van der Pol collocation (N = 50) and IK through the CUDA kernel path (one thread per
instance, int structure shared), threads per block swept, against IPOPT on this host's CPU."""
import sys, time, numpy as np
sys.path.insert(0, '.')
from benchmarks.bench_batch import vdp_workload, ik_workload
import caspar_backend as cb
from caspar_backend.compiled.cuda import launch
import casadi as ca

def ipopt_per_instance(w, k):
    S = ca.nlpsol('S', 'ipopt', w.nlp, {'print_time': False, 'ipopt.print_level': 0, 'ipopt.sb': 'yes'})
    args = {a: v for a, v in w.args.items() if a in ('x0', 'lbx', 'ubx', 'lbg', 'ubg')}
    t = time.perf_counter(); it = []
    for b in range(k):
        S(p=w.params[b], **args); it.append(S.stats()['iter_count'])
    return (time.perf_counter() - t) / k, it

orig = launch.threads_per_block
for name, w, Bs in (('vdp', vdp_workload(10000), (1000, 10000)), ('ik', ik_workload(100000), (32, 1000, 10000, 100000))):
    P = cb.from_casadi(w.nlp, **w.args); P.evaluator('cuda')
    t = time.perf_counter(); r = P.solve_batch(p=w.params[:8], print_level=0, device='cuda'); print(name, 'first batch (kernel load)', round(time.perf_counter() - t, 3), set(r.path), flush=True)
    per, its = ipopt_per_instance(w, 100 if name == 'vdp' else 300)
    print(f'{name} IPOPT one call each: {1e3*per:.3f} ms per instance (mean it {np.mean(its):.1f})', flush=True)
    ref = [P.solve(p=w.params[b], print_level=0, **{a: v for a, v in w.args.items() if a in ('x0','lbx','ubx','lbg','ubg')}) for b in range(20)]
    for B in Bs:
        sweep = (None, 1, 2, 4, 8, 32) if B <= 10000 else (None,)
        for tpb in sweep:
            launch.threads_per_block = orig if tpb is None else (lambda B_, sms, t_=tpb: t_)
            els = []
            for rep in range(3):
                t = time.perf_counter(); r = P.solve_batch(p=w.params[:B], print_level=0, device='cuda'); els.append(time.perf_counter() - t)
            el = min(els)
            st = sum(r.status[b] == ref[b].status for b in range(20)); it = sum(r.iterations[b] == ref[b].iterations for b in range(20))
            df = max(abs(r.f[b] - ref[b].f) / max(1, abs(ref[b].f)) for b in range(20))
            print(f'{name} B={B} tpb={"auto" if tpb is None else tpb}: best {el:.4f} s (runs {[round(e,4) for e in els]}), {1e3*el/B:.4f} ms/inst, x IPOPT {per*B/el:.1f}; paths {dict(zip(*np.unique(r.path, return_counts=True)))}; solved {int(np.sum(np.asarray(r.status)=="Solve_Succeeded"))}/{B}; first 20 = single st/it {st}/{it}, max rel df {df:.1e}', flush=True)
    launch.threads_per_block = orig
