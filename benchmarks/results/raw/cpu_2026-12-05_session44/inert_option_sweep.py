"""Session 44: the options the compiled path now takes at any value (compiled/options.py
INERT_UNLESS, and the restoration-only and default-valued SAME_BEHAVIOUR rows): the bank
x each option at a value other than its default, compiled_path 'no' against 'yes' --
status, iterations, x bit for bit, evaluation counts and the printed log (print_level 5)
must be equal; 'compiled' counts the solves the kernels took (at least their start)."""
import io
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.getcwd())
from tests.compiled.test_dispatch import BANK, _bank_problem  # noqa: E402

warnings.simplefilter("ignore")
OPTS = [dict(mu_oracle="loqo"), dict(adaptive_mu_globalization="never-monotone-mode"),
        dict(mu_min=1e-9), dict(mu_max=1e3), dict(sigma_max=10.0), dict(sigma_min=1e-4),
        dict(quality_function_max_section_steps=3), dict(filter_margin_fact=1e-3),
        dict(limited_memory_max_history=3), dict(inertia_free_tol=1e-3),
        dict(recalc_y_feas_tol=1e-3), dict(expect_infeasible_problem_ctol=1e-2),
        dict(expect_infeasible_problem_ytol=1e3), dict(derivative_test_tol=1e-2),
        dict(nlp_lower_bound_inf=-1e10, nlp_upper_bound_inf=1e10),
        dict(soft_resto_pderror_reduction_factor=0.0), dict(max_soft_resto_iters=0),
        dict(required_infeasibility_reduction=0.5), dict(resto_penalty_parameter=10.0),
        dict(bound_mult_reset_threshold=1.0), dict(constr_mult_reset_threshold=10.0),
        dict(recalc_y=False, bound_mult_init_method="constant", honor_original_bounds=False,
             fixed_variable_treatment="make_parameter", expect_infeasible_problem=False),
        dict(linear_solver="mumps"), dict(linear_solver="ma57", ma57_pivtol=1e-6)]
bad = total = compiled = 0
for name in sorted(BANK):
    P, d = _bank_problem(name)
    for o in OPTS:
        o = dict(o)
        o.update(dict(BANK[name].options))
        logs, res = [], []
        for mode in ("no", "yes"):
            s = io.StringIO()
            try:
                r = P.solve(d["x0"], compiled_path=mode, print_level=5, stream=s, **o)
            except Exception as e:      # noqa: BLE001
                r = e
            res.append(r)
            logs.append([ln for ln in s.getvalue().splitlines()
                         if not ln.startswith("Total seconds") and "compiled_path" not in ln
                         and not ln.strip().startswith("stream")])
        a, b = res
        total += 1
        if isinstance(a, Exception) or isinstance(b, Exception):
            same = type(a) is type(b) and str(a) == str(b)
        else:
            compiled += "path" in b.extra
            same = (a.status == b.status and a.iterations == b.iterations
                    and np.array_equal(a.x, b.x) and a.counts == b.counts
                    and logs[0] == logs[1])
        if not same:
            bad += 1
            print("DIFF", name, o, getattr(a, "status", a), getattr(a, "iterations", ""),
                  getattr(b, "status", b), getattr(b, "iterations", ""))
print("total", total, "compiled", compiled, "bad", bad)
