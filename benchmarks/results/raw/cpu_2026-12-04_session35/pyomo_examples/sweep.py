"""Run every registered model (or those named on the command line) with caspar and
with the IPOPT reference, one solve at a time, each in its own subprocess with a
timeout.  Outputs go to /tmp/pyomo_sweep/out/<name>.<solver>.{json,out,err}."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, "/tmp/pyomo_sweep")
from models import MODELS  # noqa: E402

OUT = "/tmp/pyomo_sweep/out"
TIMEOUT = int(os.environ.get("SWEEP_TIMEOUT", "180"))


def safe(name):
    return name.replace("/", "__")


def run(name, solver):
    base = os.path.join(OUT, f"{safe(name)}.{solver}")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    t0 = time.time()
    with open(base + ".out", "w") as fo, open(base + ".err", "w") as fe:
        try:
            p = subprocess.run([sys.executable, "/tmp/pyomo_sweep/run_one.py", name, solver,
                                base + ".json"], stdout=fo, stderr=fe, timeout=TIMEOUT,
                               env=env, cwd="/tmp/pyomo_sweep")
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    dt = time.time() - t0
    if rc != 0 or not os.path.exists(base + ".json"):
        rec = {"name": name, "solver": solver, "path": MODELS[name][0], "note": MODELS[name][2],
               "crash": f"subprocess rc={rc} after {dt:.0f}s (limit {TIMEOUT}s)"}
        json.dump(rec, open(base + ".json", "w"), indent=1)
    print(f"{name:35s} {solver:7s} rc={rc} {dt:6.1f}s", flush=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    names = sys.argv[1:] or list(MODELS)
    for n in names:
        for s in ("caspar", "ipopt"):
            p = os.path.join(OUT, f"{safe(n)}.{s}.json")
            if os.path.exists(p):
                os.remove(p)
            run(n, s)


if __name__ == "__main__":
    main()
