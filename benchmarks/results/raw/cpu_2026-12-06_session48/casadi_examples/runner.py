"""Run one example script with solve logging.

usage: python runner.py SCRIPT LOG.jsonl
Each nlpsol call (casadi's or caspar's) and each Opti.solve is logged as one JSON line:
kind, status, iter_count, f, wall time of the call, t_wall_total from stats.
"""
import json, os, sys, time, traceback, runpy

script, log = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.environ.setdefault("MPLBACKEND", "Agg")
logf = open(log, "w")


def emit(d):
    logf.write(json.dumps(d, default=str) + "\n")
    logf.flush()


import casadi as ca
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.show = lambda *a, **k: None

SOLVERS = {}  # id(fn) -> (name, plugin, fn)
NSOLVE = [0]


def _f_of(res):
    try:
        if isinstance(res, dict):
            f = res.get("f")
        else:
            f = res[1]
        return float(ca.DM(f)) if f is not None else None
    except Exception as e:  # noqa
        return "ERR " + repr(e)


def _stats(fn):
    try:
        st = fn.stats()
        return st.get("return_status"), st.get("iter_count"), st.get("t_wall_total"), st.get("success")
    except Exception as e:
        return "STATS-ERR " + repr(e), None, None, None


def _register(fn, name, plugin):
    SOLVERS[id(fn)] = (name, plugin, fn)
    emit(dict(event="create", name=name, plugin=plugin))
    return fn


_ca_nlpsol = ca.nlpsol


def ca_nlpsol(name, solver, *args):
    t = time.perf_counter()
    fn = _ca_nlpsol(name, solver, *args)
    emit(dict(event="build", plugin=solver, t_build=time.perf_counter() - t))
    return _register(fn, name, solver)


ca.nlpsol = ca_nlpsol

_orig_call = ca.Function.__call__


def logged_call(self, *args, **kwargs):
    ent = SOLVERS.get(id(self))
    if ent is None:
        return _orig_call(self, *args, **kwargs)
    t = time.perf_counter()
    try:
        res = _orig_call(self, *args, **kwargs)
    except Exception as e:
        st = _stats(self)
        NSOLVE[0] += 1
        emit(dict(event="solve", k=NSOLVE[0], name=ent[0], plugin=ent[1], status=st[0],
                  iter=st[1], f=None, wall=time.perf_counter() - t, t_wall_total=st[2],
                  exception=repr(e)[:2000]))
        raise
    wall = time.perf_counter() - t
    st = _stats(self)
    NSOLVE[0] += 1
    emit(dict(event="solve", k=NSOLVE[0], name=ent[0], plugin=ent[1], status=st[0], iter=st[1],
              f=_f_of(res), wall=wall, t_wall_total=st[2]))
    return res


ca.Function.__call__ = logged_call

# caspar front-end
try:
    import caspar_backend.casadi as cpc
    from caspar_backend.adapters.casadi import nlpsol_load, opti as cpopti, nlpsol_function
    _cp_nlpsol = nlpsol_load.nlpsol

    def cp_nlpsol(name, solver, *args):
        t = time.perf_counter()
        fn = _cp_nlpsol(name, solver, *args)
        emit(dict(event="build", plugin=solver, t_build=time.perf_counter() - t))
        return _register(fn, name, solver)

    cpc.nlpsol = cp_nlpsol
    cpc.__dict__["nlpsol"] = cp_nlpsol
    CasparOpti = cpopti.Opti
except Exception:
    traceback.print_exc()
    CasparOpti = None


def wrap_opti_solve(cls, plugin_default, meth):
    orig = getattr(cls, meth)

    def solve(self):
        t = time.perf_counter()
        try:
            sol = orig(self)
        except Exception as e:
            wall = time.perf_counter() - t
            try:
                st = self.stats()
                status, it = st.get("return_status"), st.get("iter_count")
            except Exception as e2:
                status, it = "STATS-ERR " + repr(e2), None
            try:
                f = float(self.debug.value(self.f))
            except Exception as e3:
                f = "ERR " + repr(e3)
            NSOLVE[0] += 1
            emit(dict(event="solve", k=NSOLVE[0], name="opti." + meth, plugin=plugin_default(self),
                      status=status, iter=it, f=f, wall=wall, exception=repr(e)[:2000]))
            raise
        wall = time.perf_counter() - t
        try:
            st = sol.stats()
            status, it, tw = st.get("return_status"), st.get("iter_count"), st.get("t_wall_total")
        except Exception as e2:
            status, it, tw = "STATS-ERR " + repr(e2), None, None
        try:
            f = float(sol.value(self.f))
        except Exception as e3:
            f = "ERR " + repr(e3)
        NSOLVE[0] += 1
        emit(dict(event="solve", k=NSOLVE[0], name="opti." + meth, plugin=plugin_default(self),
                  status=status, iter=it, f=f, wall=wall, t_wall_total=tw))
        return sol
    setattr(cls, meth, solve)


if CasparOpti is not None:
    for m in ("solve", "solve_limited"):
        wrap_opti_solve(CasparOpti, lambda o: "caspar" if o.uses_caspar else "ipopt(opti)", m)
for m in ("solve", "solve_limited"):
    wrap_opti_solve(ca.Opti, lambda o: "ipopt(opti)", m)

os.chdir(os.path.dirname(script))
sys.path.insert(0, os.path.dirname(script))
sys.argv = [script]
t0 = time.perf_counter()
rc = 0
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    rc = e.code or 0
except BaseException as e:
    rc = 1
    emit(dict(event="exception", exc=repr(e)[:3000], tb=traceback.format_exc()[-6000:]))
    traceback.print_exc()
emit(dict(event="end", total=time.perf_counter() - t0, rc=rc))
logf.close()
sys.exit(rc)
