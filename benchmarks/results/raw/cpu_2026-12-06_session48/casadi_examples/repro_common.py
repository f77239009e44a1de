"""Shared harness for the reproducers: run a CasADi example unchanged, but every
casadi.nlpsol(name, 'ipopt', nlp, opts) call solves the same problem with IPOPT and with
caspar (same options, 'ipopt.*' renamed 'caspar.*') and prints status/iterations/objective.
Environment: CASPAR_EXTRA='{"linear_solver": "pardisomkl"}' adds caspar options;
IPOPT_EXTRA likewise for IPOPT; PL=print_level for both (default 0)."""
import json, os, sys, runpy, time
import matplotlib; matplotlib.use("Agg")
import casadi as ca
from caspar_backend.casadi import nlpsol as cp_nlpsol

_ca_nlpsol = ca.nlpsol
CE = json.loads(os.environ.get("CASPAR_EXTRA", "{}"))
IE = json.loads(os.environ.get("IPOPT_EXTRA", "{}"))
PL = int(os.environ.get("PL", "0"))
DROP = set(os.environ.get("DROP", "").split(",")) - {""}


class Both:
    def __init__(self, name, nlp, opts):
        o = {k: v for k, v in (opts or {}).items() if k not in DROP}
        io = dict(o); io.update({"ipopt." + k: v for k, v in IE.items()}); io["ipopt.print_level"] = PL
        io.setdefault("print_time", False)
        co = {("caspar." + k[6:] if k.startswith("ipopt.") else k): v for k, v in o.items()}
        co.update({"caspar." + k: v for k, v in CE.items()}); co["caspar.print_level"] = PL
        self.ip = _ca_nlpsol(name, "ipopt", nlp, io)
        self.cp = cp_nlpsol(name, "caspar", nlp, co)

    def __call__(self, *a, **k):
        out = {}
        for tag, S in (("ipopt", self.ip), ("caspar", self.cp)):
            t = time.perf_counter()
            r = S(*a, **k)
            st = S.stats()
            out[tag] = r
            print(f"[repro] {tag:6s} status={st['return_status']:22s} iter={st['iter_count']:4d} "
                  f"f={float(r['f']):.15g} t={time.perf_counter()-t:.3f}s", flush=True)
        fi, fc = float(out["ipopt"]["f"]), float(out["caspar"]["f"])
        print(f"[repro] rel diff f = {abs(fi-fc)/max(abs(fi),abs(fc),1e-300):.2e}", flush=True)
        return out["ipopt"]

    def stats(self):
        return self.ip.stats()


def nlpsol(name, solver, nlp, opts=None):
    assert solver == "ipopt"
    return Both(name, nlp, opts)


def run(example):
    ca.nlpsol = nlpsol
    import matplotlib.pyplot as plt; plt.show = lambda *a, **k: None
    path = os.path.join("/tmp/casadi_sweep/src/docs/examples/python", example)
    os.chdir(os.path.dirname(path))
    runpy.run_path(path, run_name="__main__")
