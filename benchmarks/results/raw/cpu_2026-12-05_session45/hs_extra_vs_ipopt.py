"""The further Hock-Schittkowski set (tests/solver/test_hs_extra.py) against IPOPT, both
caspar paths: prints the problems whose status or iteration count differs.

    PYTHONPATH=<repo> python hs_extra_vs_ipopt.py"""
import warnings

from tests.solver.test_hs_extra import PROBLEMS
from tests.support.solver_harness import run_caspar, run_ipopt

warnings.simplefilter("ignore")
for path in ("yes", "no"):
    bad = []
    for n, p in PROBLEMS.items():
        d = dict(p.build(), options=p.options)
        ri, rc = run_ipopt(d, {}), run_caspar(d, {"compiled_path": path})
        if ri["status"] != rc.status or ri["iter"] != rc.iterations:
            bad.append((n, ri["status"], rc.status, ri["iter"], rc.iterations))
    print(f"compiled_path={path}: {len(PROBLEMS) - len(bad)}/{len(PROBLEMS)} at IPOPT's "
          f"status and iteration count; differing: {bad}")
