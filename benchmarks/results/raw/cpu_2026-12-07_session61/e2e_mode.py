"""bench_e2e.py with the solver stack's preload on (this tree's default) or off.
python e2e_mode.py on|off CASE [bench_e2e options]"""
import runpy, sys
mode = sys.argv.pop(1)
if mode == "off":
    import caspar_backend.linsolve.cudss_preload as m
    m.start = lambda: None
sys.argv[0] = "benchmarks/bench_e2e.py"
runpy.run_path("benchmarks/bench_e2e.py", run_name="__main__")
