import sys
sys.path.insert(0, '/work/main')
exec(open('/tmp/negcount.py').read().split("which = sys.argv[1]")[0])
what = sys.argv[1]
if what == "bank":
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar
    tot = 0
    for p in bank(include_slow=False):
        stats["cur"] = dict(f=0, bad=0)
        d = dict(p.build(), options=p.options)
        r = run_caspar(d, dict(compiled_path="no"), public=True)
        if stats["cur"]["bad"]:
            print(p.name, r.status, r.iterations, stats["cur"])
        tot += stats["cur"]["bad"]
    print("bank total n_neg<m", tot)
else:
    sys.path.insert(0, '/tmp/helperA/scratch')
    import json, os
    import pyomo.environ as pyo
    from pyomo.contrib.parmest.examples.semibatch.semibatch import SemiBatchExperiment
    for i in range(10):
        with open(f"/tmp/helperA/scratch/data/exp{i+1}.out") as fh:
            data = json.load(fh)
        m = SemiBatchExperiment(data).get_labeled_model()
        stats["cur"] = dict(f=0, bad=0)
        r = cb.from_pyomo(m).solve(tol=1e-8, print_level=0, compiled_path="no", max_wall_time=60)
        print(f"exp{i+1}", r.status, r.iterations, stats["cur"], flush=True)
