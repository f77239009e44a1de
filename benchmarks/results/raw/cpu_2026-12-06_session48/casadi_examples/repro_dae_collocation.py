# IPOPT vs caspar on CasADi's docs/examples/python/dae_collocation.py (tol 1e-4, ma27 dropped:
# not in this IPOPT build, so IPOPT runs MUMPS).  usage: PL=5 python repro_dae_collocation.py
import sys; sys.path.insert(0, "/tmp/casadi_sweep")
import os; os.environ.setdefault("DROP", "ipopt.linear_solver")
import repro_common; repro_common.run("dae_collocation.py")
