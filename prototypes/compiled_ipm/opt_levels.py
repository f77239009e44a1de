"""Compile cost vs speed at Numba's LLVM optimization levels (NUMBA_OPT), interpreter
backend: a fresh cache per level, the first call timed in one process, then 200 IK
solves timed in a second process that loads that cache."""
import json, os, subprocess, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
for opt in sys.argv[1:] or ["3", "1", "0"]:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d, NUMBA_OPT=opt)
        r = subprocess.run([sys.executable, os.path.join(HERE, "compile_probe.py"), "interp"],
                           env=env, capture_output=True, text=True, check=True)
        c = json.loads(r.stdout.strip().splitlines()[-1])
        r = subprocess.run([sys.executable, os.path.join(HERE, "t_cache.py")], env=env,
                           capture_output=True, text=True, check=True, cwd=HERE)
        print(f"NUMBA_OPT={opt}: first call {c['first_solve_wall_s']:.1f} s wall "
              f"({c['first_solve_cpu_s']:.1f} s CPU); then {r.stdout.strip().splitlines()[-1]}",
              flush=True)
