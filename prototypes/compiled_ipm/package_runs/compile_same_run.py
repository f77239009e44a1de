# cold compile, same run, back to back: prototype (tuples) then package (flat buffers);
# each in a fresh process with a fresh cache dir; child CPU time from getrusage
import os, resource, subprocess, sys, time, shutil
PY = "/work/venv_numba/bin/python"
def run(script, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); w0 = time.perf_counter()
    out = subprocess.run([PY, script], env={**os.environ, **env}, capture_output=True, text=True).stdout
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out.strip().splitlines()[0], r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, time.perf_counter() - w0
for d in ("cb_same", "ca_same"):
    shutil.rmtree(f"/tmp/compiled_meas/{d}", ignore_errors=True)
for name, script, env in (("before (tuples)", "before.py", {"NUMBA_CACHE_DIR": "/tmp/compiled_meas/cb_same"}),
                          ("after (flat)", "after_compile_only.py", {"CASPAR_CACHE_DIR": "/tmp/compiled_meas/ca_same"})):
    line, cpu, wall = run(script, env)
    print(f"{name}: process CPU {cpu:.1f}s wall {wall:.1f}s load {os.getloadavg()[0]:.1f} | {line}", flush=True)
