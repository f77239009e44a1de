"""bench_e2e.py with the solver stack's preload and cuDSS's analysis ahead switched.
python e2e_mode.py preload=on|off ahead=on|off warm=yes|no CASE [bench_e2e options]
warm=yes loads nvmath/cuDSS before anything is timed, as the benchmark runner does."""
import runpy, sys
flags = dict(a.split("=") for a in sys.argv[1:4]); del sys.argv[1:4]
if flags["preload"] == "off":
    try:
        import caspar_backend.linsolve.cudss_preload as m
        m.start = lambda: None
    except ImportError:
        pass
if flags["ahead"] == "off":
    try:
        import caspar_backend.linsolve.cudss_ahead as a
        a.ENABLED = False
    except ImportError:
        pass
if flags["warm"] == "yes":
    from caspar_backend.linsolve.cudss import cudss_problem
    assert cudss_problem() is None
sys.argv[0] = "benchmarks/bench_e2e.py"
runpy.run_path("benchmarks/bench_e2e.py", run_name="__main__")
