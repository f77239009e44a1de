"""caspar's iterations on COPS (scale 1) and OCP models with option sets, against IPOPT's from a suite CSV."""
import sys, json, csv, time
sys.path.insert(0, '/work/main')
from benchmarks.cases import cops_cases, ocp_cases
import caspar_backend as cb
optsets = [json.loads(a) for a in sys.argv[1:]] or [{}]
ref = {}
for f in ('/tmp/ref_cops.csv',
          '/tmp/ref_ocp.csv'):
    for r in csv.DictReader(open(f)):
        ref[(r['model'], r['size'])] = (r['ipopt_iter'], r['cpu_iter'])
cases = list(cops_cases("1")) + list(ocp_cases([1000, 10000]))
for c in cases:
    built = c.build()
    row = [f"{c.name:18s} {c.size:10s}", "ipopt %4s ref %4s" % ref.get((c.name, c.size), ('?', '?'))]
    for o in optsets:
        P = cb.from_pyomo(built[1]) if built[0] == "pyomo" else cb.from_casadi(built[1], **built[2])
        t = time.perf_counter()
        r = P.solve(tol=1e-6, print_level=0, **o)
        row.append(f"{r.iterations:4d} {r.f:.10g} {time.perf_counter()-t:.3f}s")
    print(" | ".join(row), flush=True)
