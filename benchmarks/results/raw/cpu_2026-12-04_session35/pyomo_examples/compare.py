"""Read out/*.json and write results.md (table + flags)."""

from __future__ import annotations

import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, "/tmp/pyomo_sweep")
from models import MODELS  # noqa: E402

OUT = "/tmp/pyomo_sweep/out"


def safe(name):
    return name.replace("/", "__")


def load(name, solver):
    p = os.path.join(OUT, f"{safe(name)}.{solver}.json")
    return json.load(open(p)) if os.path.exists(p) else None


def solve_text(name, solver, stream):
    p = os.path.join(OUT, f"{safe(name)}.{solver}.{stream}")
    if not os.path.exists(p):
        return ""
    t = open(p).read()
    if "=== SOLVE BEGIN" in t:
        t = t.split("=== SOLVE BEGIN", 1)[1]
        t = t.split("=== SOLVE END", 1)[0]
    return t.strip()


def fnum(x, fmt="{:.6g}"):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return fmt.format(x)


def caspar_ok(c):
    return c.get("termination") in ("optimal", "locallyOptimal", "globallyOptimal")


def compare(n, c, i, label="IPOPT"):
    """row dict + flags for caspar record c vs reference record i"""
    fl = []
    if "crash" in c:
        fl.append("caspar " + c["crash"])
    if "exception" in c:
        fl.append("caspar exception: " + c["exception"].strip().splitlines()[-1])
    cok = caspar_ok(c) if "termination" in c else None
    iok = i.get("success")
    if cok is not None and iok is not None and cok != iok:
        fl.append(f"status mismatch: caspar {c.get('termination')}/{c.get('status')} vs {label} {i.get('status')}")
    fc, fi = c.get("objective"), i.get("objective")
    rel = None
    if isinstance(fc, float) and isinstance(fi, float):
        rel = abs(fc - fi) / max(abs(fi), 1e-8)
        if cok and iok and rel > 1e-6:
            fl.append(f"objective rel diff {rel:.2e} (caspar {fc:.10g}, {label} {fi:.10g})")
    dx = None
    if "x" in c and "x" in i:
        diffs = []
        for k, vi in i["x"].items():
            vc = c["x"].get(k)
            diffs.append(abs(vc - vi) if isinstance(vi, float) and isinstance(vc, float) else math.inf)
        dx = max(diffs) if diffs else 0.0
    ic, ii = c.get("iterations"), i.get("iterations")
    if isinstance(ic, int) and isinstance(ii, int) and ic > 1.5 * ii + 5:
        fl.append(f"iterations {ic} > 1.5*{ii}+5")
    nv = i.get("n", c.get("n"))
    tc, ti = c.get("wall_s"), i.get("wall_s")
    if nv and nv > 1000 and tc and ti and iok and tc > 5 * ti:
        fl.append(f"time {tc:.2f}s > 5x {label} {ti:.2f}s (n={nv})")
    if "n" in c and "n" in i and (c["n"], c["m"]) != (i["n"], i["m"]):
        fl.append(f"size differs: caspar n={c['n']} m={c['m']}, NL n={i['n']} m={i['m']}")
    row = dict(
        name=n, n=nv, m=i.get("m", c.get("m")),
        cterm=(f"{c.get('termination')}/{c.get('status')}" if "termination" in c else
               ("EXC" if "exception" in c else ("TIMEOUT/CRASH" if "crash" in c else "-"))),
        cit=ic, cobj=fc, ist=i.get("status", "EXC" if "exception" in i else "-"), iit=ii,
        iobj=fi, rel=rel, dx=dx, tc=tc, ti=ti, tci=c.get("solver_time"), tii=i.get("solver_time"),
        flags=fl)
    return row, fl


def main():
    rows, flags, notes, sup_rows = [], [], [], []
    names = [n for n in MODELS if load(n, "caspar") or load(n, "ipopt")]
    for n in names:
        c, i = load(n, "caspar") or {}, load(n, "ipopt") or {}
        if "build_error" in c or "build_error" in i:
            notes.append((n, "model build failed: " + (c.get("build_error") or i.get("build_error")).strip().splitlines()[-1]))
            continue
        if "crash" in i:
            notes.append((n, "IPOPT reference " + i["crash"]))
        if "exception" in i:
            notes.append((n, "IPOPT reference raised: " + i["exception"].strip().splitlines()[-1]))
        row, fl = compare(n, c, i)
        rows.append(row)
        for f in fl:
            flags.append((n, f))
        a = load(n, "ipopt_adj")
        if a:
            srow, sfl = compare(n, c, a, "IPOPT(adjusted copy)")
            srow["adj"] = "; ".join(a.get("adjustments", []))
            sup_rows.append(srow)
            for f in sfl:
                flags.append((n + " [supplementary]", f))
        warn = [ln for ln in (solve_text(n, "caspar", "err").splitlines()) if ln.strip()]
        if warn:
            notes.append((n, "caspar stderr during solve:\n    " + "\n    ".join(warn[:12])))

    L = []
    L.append("# caspar vs IPOPT (casadi-bundled, via tests/support/pyomo_ipopt_reference) on Pyomo's examples\n")
    L.append("Pyomo/pyomo examples at the fetched HEAD; caspar default options; one solve per subprocess.\n")
    L.append("rel = |f_caspar - f_ipopt| / max(|f_ipopt|, 1e-8); dx = max |x_caspar - x_ipopt| over the NL file's variables;\n"
             "t = end-to-end wall seconds of `SolverFactory('caspar').solve(m)` / `solve_reference(m)` "
             "(in parentheses: caspar's reported solver time / IPOPT's own solve call).\n")
    L.append("| model | n | m | caspar term/status | it | caspar obj | IPOPT status | it | IPOPT obj | rel | dx | t caspar | t IPOPT | flags |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        L.append("| {name} | {n} | {m} | {cterm} | {cit} | {cobj} | {ist} | {iit} | {iobj} | {rel} | {dx} | {tc} ({tci}) | {ti} ({tii}) | {fl} |".format(
            name=r["name"], n=r["n"], m=r["m"], cterm=r["cterm"], cit=fnum(r["cit"], "{}"),
            cobj=fnum(r["cobj"], "{:.10g}"), ist=r["ist"], iit=fnum(r["iit"], "{}"),
            iobj=fnum(r["iobj"], "{:.10g}"), rel=fnum(r["rel"], "{:.1e}"), dx=fnum(r["dx"], "{:.1e}"),
            tc=fnum(r["tc"], "{:.2f}"), tci=fnum(r["tci"], "{:.2f}"), ti=fnum(r["ti"], "{:.2f}"),
            tii=fnum(r["tii"], "{:.3f}"), fl="; ".join(r["flags"]) or ""))
    L.append("\n## Supplementary: reference on an adjusted copy (same NLP) where the reference could not read the model\n")
    L.append("| model | adjustment | n | m | caspar term | it | caspar obj | IPOPT status | it | IPOPT obj | rel | dx | t caspar | t IPOPT | flags |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sup_rows:
        L.append("| {name} | {adj} | {n} | {m} | {cterm} | {cit} | {cobj} | {ist} | {iit} | {iobj} | {rel} | {dx} | {tc} ({tci}) | {ti} ({tii}) | {fl} |".format(
            name=r["name"], adj=r["adj"], n=r["n"], m=r["m"], cterm=r["cterm"], cit=fnum(r["cit"], "{}"),
            cobj=fnum(r["cobj"], "{:.10g}"), ist=r["ist"], iit=fnum(r["iit"], "{}"),
            iobj=fnum(r["iobj"], "{:.10g}"), rel=fnum(r["rel"], "{:.1e}"), dx=fnum(r["dx"], "{:.1e}"),
            tc=fnum(r["tc"], "{:.2f}"), tci=fnum(r["tci"], "{:.2f}"), ti=fnum(r["ti"], "{:.2f}"),
            tii=fnum(r["tii"], "{:.3f}"), fl="; ".join(r["flags"]) or ""))
    L.append("\n## Flags\n")
    for n, f in flags:
        L.append(f"- **{n}**: {f}")
    L.append("\n## Notes (build failures, reference problems, caspar stderr)\n")
    for n, f in notes:
        L.append(f"- **{n}**: {f}")
    open("/tmp/pyomo_sweep/results.md", "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
