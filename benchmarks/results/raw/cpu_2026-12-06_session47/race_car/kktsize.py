"""prints the caspar KKT dimensions (nw, m, K rows, linear solver class) for race_car.py"""
import sys, runpy
import caspar_backend.solver.ipm as ipm
orig = ipm.make_kkt_system
def wrap(name, nlp, solver, xp, **kw):
    k = orig(name, nlp, solver, xp, **kw)
    print(f"KKT system={name} nx={nlp.nx} nw={nlp.nw} m={nlp.m} solver={type(solver).__name__} pivots={getattr(solver,'pivots',None)}", file=sys.stderr)
    return k
ipm.make_kkt_system = wrap
sys.argv = ["race_car.py", "caspar", "/dev/null", "print_level=0"]
runpy.run_path("race_car.py", run_name="__main__")
