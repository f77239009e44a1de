"""caspar's iterations on PGLib typ <= 2,000 buses (general path) under polishing settings (env), against IPOPT's from a suite CSV."""
import sys, csv, time, os
sys.path.insert(0, '/work/main')
from benchmarks.cases import acopf_cases
import caspar_backend as cb
ref = {r['model']: (r['ipopt_iter'], r['cpu_iter'], r['ipopt_f']) for r in csv.DictReader(open('/tmp/ref_acopf.csv'))}
configs = [c.split(":") for c in sys.argv[1:]]     # polish:contraction
built = []
for c in acopf_cases(2000):
    b = c.build()
    P = cb.from_casadi(b[1], **b[2])
    for pol, con in configs:
        os.environ["CASPAR_POLISH"], os.environ["CASPAR_POLISH_C"] = pol, con
        t = time.perf_counter()
        r = P.solve(tol=1e-6, print_level=0, compiled_path="no")
        ip = ref.get(c.name, ('?', '?', 'nan'))
        print(f"{c.name:18s} polish {pol} c {con} | ipopt {ip[0]:>4} ref {ip[1]:>4} | {r.iterations:4d} {r.status[:12]} relf {abs(r.f - float(ip[2])) / abs(float(ip[2])):.1e} {time.perf_counter() - t:.2f}s", flush=True)
