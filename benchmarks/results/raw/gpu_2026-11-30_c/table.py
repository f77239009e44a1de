"""Markdown table of the PGLib api/sad GPU rows of this directory.

Joins the caspar-GPU rows (``bench_gpu_solver.py --json``: apisad_gpu_*.json, rest_gpu_*.json,
../gpu_2026-11-30_d/rest40_gpu_*.json) with IPOPT's (ipopt_part*.jsonl,
../gpu_2026-11-30_d/ipopt_rest40.jsonl: the same command on the same host;
../gpu_2026-11-30_e/ipopt_rest28.jsonl: IPOPT alone on the same host, a later command), PGLib's BASELINE.md
and the caspar-CPU / IPOPT ratio of the CPU tables (../pglib_apisad_cpu_2026-11-30/*.csv,
2-core development machine).  Run from the repository root with PGLIB_OPF_DIR set:
``python benchmarks/results/gpu_2026-11-30_c/table.py``."""

import csv
import glob
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
from benchmarks.models.matpower import pglib_baseline  # noqa: E402

# The sixth session's command (../gpu_2026-11-30_d, commit 95543ed) added the 40 smallest cases;
# its rows are marked with a dagger.
later = f"{here}/../gpu_2026-11-30_d"
gpu, dagger = {}, set()
for f in sorted(glob.glob(f"{here}/apisad_gpu_*.json") + glob.glob(f"{here}/rest_gpu_*.json")
                + glob.glob(f"{later}/rest40_gpu_*.json")):
    for r in json.load(open(f)):
        gpu[r["size"]] = r
        if f.startswith(later):
            dagger.add(r["size"])
# The seventh session's command (../gpu_2026-11-30_e, IPOPT alone on the same host, 14 processes
# at a time) gave IPOPT rows for 26 of the 28 cases the earlier commands had not reached; their
# IPOPT cells are marked with a double dagger.
latest = f"{here}/../gpu_2026-11-30_e"
ipopt, ddagger = {}, set()
for f in sorted(glob.glob(f"{here}/ipopt_part*.jsonl") + glob.glob(f"{later}/ipopt_rest40.jsonl")
                + glob.glob(f"{latest}/ipopt_rest28.jsonl")):
    for line in open(f):
        r = json.loads(line)
        ipopt[r["case"]] = r
        if f.startswith(latest):
            ddagger.add(r["case"])
cpu_ratio = {}
for f in glob.glob(f"{here}/../pglib_apisad_cpu_2026-11-30/*.csv"):
    for r in csv.DictReader(open(f)):
        if r["cpu_ratio"]:
            cpu_ratio[r["model"]] = float(r["cpu_ratio"])
base = pglib_baseline()
PH = ("function_evaluations", "kkt_assembly", "kkt_factorization", "kkt_solve", "other")

print("| case | n | m | caspar GPU status, iter | GPU solve s | per-iter ms eval / asm / factor / "
      "solve / other | caspar objective | = BASELINE | IPOPT status, iter | IPOPT solve s | "
      "**GPU / IPOPT** | rel. diff f | caspar-CPU / IPOPT (dev machine) |")
print("|" + "---|" * 13)
rows = sorted(gpu.values(), key=lambda r: (-base[r["size"]].nodes, r["size"]))
tally = dict(rows=0, ok=0, base=0, same=0, faster=0)
for r in rows:
    g, c = r["gpu"], r["size"]
    b = base.get(c)
    ip = ipopt.get(c)
    tally["rows"] += 1
    ok = g["status"] == "Solve_Succeeded"
    tally["ok"] += ok
    at_base = bool(b and b.matches(g["f"]))
    tally["base"] += at_base and ok
    split = " / ".join(f"{g['per_iter_ms'][k]:.2f}" for k in PH)
    if ip:
        ratio = g["t"] / ip["solve"]
        lim = "" if ip["status"] == "Solve_Succeeded" else " (IPOPT stopped)"
        speed = f"{1 / ratio:.1f}x" if ratio < 1 else f"{ratio:.1f}x slower"
        rat = f"**{ratio:.3f}** ({speed}){lim}"
        tally["faster"] += ratio < 1
        rel = abs(g["f"] - ip["f"]) / abs(ip["f"])
        same = ok and ip["status"] == "Solve_Succeeded" and rel <= 1e-6
        tally["same"] += same
        ipc, ipt, rd = f"{ip['status']}, {ip['iter']}{' ‡' if c in ddagger else ''}", f"{ip['solve']:.3f}", f"{rel:.0e}"
    else:
        ipc, ipt, rat, rd = "not run (model build + solve past a command's 10 minutes)", "—", "—", "—"
    cr = f"{cpu_ratio[c]:.2f}" if c in cpu_ratio else "—"
    print(f"| {c}{' †' if c in dagger else ''} | {r['n']:,} | {r['m']:,} | {g['status']}, {g['iter']} | {g['t']:.3f} | {split} "
          f"| {g['f']:.6e} | {'yes' if at_base else 'no'} | {ipc} | {ipt} | {rat} | {rd} | {cr} |")
print()
print(f"rows {tally['rows']}, caspar Solve_Succeeded {tally['ok']}, at BASELINE {tally['base']}, "
      f"IPOPT rows {sum(1 for r in rows if r['size'] in ipopt)}, both succeeded and equal to 1e-6 "
      f"{tally['same']}, GPU faster {tally['faster']}")
