"""On the device: an AC-OPF's first GPU solve in a fresh process, cuDSS's analysis ahead
(in its thread from the KKT system's construction) or at the first factorization.
Usage: CASE on|off [PROFILE_FILE]: the model built, from_casadi + evaluator('cuda')
(problem cache off), the first solve (under cProfile when PROFILE_FILE is given: own and
cumulative time written there, the build's to PROFILE_FILE.build), one re-solve; one JSON
line per solve."""
import cProfile
import io
import json
import os
import pstats
import sys
import time

os.environ["CASPAR_PROBLEM_CACHE"] = "0"
sys.path.insert(0, ".")
import caspar_backend as cb  # noqa: E402
from benchmarks.cases import acopf_cases  # noqa: E402
from caspar_backend.linsolve import cudss_ahead  # noqa: E402

case, ahead = sys.argv[1], sys.argv[2] == "on"
prof_file = sys.argv[3] if len(sys.argv) > 3 else None
cudss_ahead.ENABLED = ahead
built = list(acopf_cases(10 ** 6, {case}))[0].build()
nlp, args = built[1], built[2]
bprof = cProfile.Profile() if prof_file else None
t = time.perf_counter()
if bprof:
    bprof.enable()
P = cb.from_casadi(nlp, **args)
P.evaluator("cuda")
if bprof:
    bprof.disable()
build = time.perf_counter() - t
if bprof:
    text = io.StringIO()
    st = pstats.Stats(bprof, stream=text)
    st.sort_stats("cumulative").print_stats(80)
    st.sort_stats("tottime").print_stats(40)
    open(prof_file + ".build", "w").write(text.getvalue())
for run in ("first", "re"):
    prof = cProfile.Profile() if (prof_file and run == "first") else None
    t = time.perf_counter()
    if prof:
        prof.enable()
    r = P.solve(tol=1e-6, print_level=0, max_iter=3000, device="cuda")
    if prof:
        prof.disable()
    s = time.perf_counter() - t
    print(json.dumps(dict(case=case, ahead=ahead, run=run, build=round(build, 3),
                          s=round(s, 4), it=int(r.iterations), status=r.status, f=float(r.f),
                          analysis=round(float(r.extra.get("analysis_seconds", 0)), 4),
                          timings={k: round(float(v), 4) for k, v in r.timings.items()})),
          flush=True)
    if prof:
        text = io.StringIO()
        st = pstats.Stats(prof, stream=text)
        st.sort_stats("cumulative").print_stats(100)
        st.sort_stats("tottime").print_stats(50)
        open(prof_file, "w").write(text.getvalue())
