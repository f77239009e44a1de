import json, os, sys, math
L = "/tmp/casadi_sweep/logs/"
def load(v, n):
    p = f"{L}{v}.{n}.jsonl"
    if not os.path.exists(p): return None
    ev = [json.loads(l) for l in open(p)]
    return ev
names = sys.argv[1:]
rows = []
for n in names:
    base = n
    ip = load("ipopt", n + "_mumps") or load("ipopt", n)
    ipname = n + "_mumps" if load("ipopt", n + "_mumps") else n
    orig = load("ipopt", n) if ipname != n else None
    cp = load("caspar", n)
    si = [e for e in (ip or []) if e["event"] == "solve"]
    sc = [e for e in (cp or []) if e["event"] == "solve"]
    exi = [e for e in (ip or []) if e["event"] == "exception"]
    exc = [e for e in (cp or []) if e["event"] == "exception"]
    endc = [e for e in (cp or []) if e["event"] == "end"]
    k = max(len(si), len(sc))
    if k > 12:
        agg = dict(n_ipopt=len(si), n_caspar=len(sc),
                   status_mismatch=sum(1 for a, b in zip(si, sc) if a['status'] != b['status']),
                   iter_mismatch=sum(1 for a, b in zip(si, sc) if a['iter'] != b['iter']),
                   ipopt_status=sorted(set(a['status'] for a in si)), caspar_status=sorted(set(b['status'] for b in sc)),
                   ipopt_iters=sum(a['iter'] for a in si), caspar_iters=sum(b['iter'] for b in sc),
                   max_rel=max(abs(a['f']-b['f'])/max(abs(a['f']),abs(b['f']),1e-300) for a, b in zip(si, sc)),
                   t_ipopt=sum(a['wall'] for a in si), t_caspar=sum(b['wall'] for b in sc),
                   t_ipopt_first=si[0]['wall'], t_caspar_first=sc[0]['wall'], t_caspar_2=sc[1]['wall'])
        print(n, "AGGREGATE", agg)
        si, sc = si[:3], sc[:3]; k = 3
    for i in range(k):
        a = si[i] if i < len(si) else {}
        b = sc[i] if i < len(sc) else {}
        fa, fb = a.get("f"), b.get("f")
        flags = []
        rd = None
        if isinstance(fa, float) and isinstance(fb, float):
            rd = abs(fa - fb) / max(abs(fa), abs(fb), 1e-300)
            if rd > 1e-6 and abs(fa - fb) > 1e-12: flags.append("OBJ")
        if a.get("status") != b.get("status"): flags.append("STATUS")
        ia, ib = a.get("iter"), b.get("iter")
        if isinstance(ia, int) and isinstance(ib, int) and abs(ia - ib) > max(1, 0.2 * ia): flags.append("ITER")
        if b.get("exception"): flags.append("EXC")
        if a.get("wall") and b.get("wall") and b["wall"] > 5 * a["wall"] and b["wall"] > 0.05: flags.append(f"SLOW x{b['wall']/a['wall']:.1f}")
        rows.append((n if i == 0 else "", i + 1, a.get("status"), ia, fa, a.get("wall"), b.get("status"), ib, fb, b.get("wall"), rd, ",".join(flags)))
    if not si and not sc:
        rows.append((n, 0, None, None, None, None, None, None, None, None, None, "NO SOLVES"))
    if exi: print(n, "IPOPT exception:", exi[0]["exc"][:300])
    if exc: print(n, "CASPAR exception:", exc[0]["exc"][:300])
    if orig is not None:
        so = [e for e in orig if e["event"] == "solve"]; eo = [e for e in orig if e["event"] == "exception"]
        print(n, "original (ma27) IPOPT:", [(e["status"], e["iter"]) for e in so][:3], eo[0]["exc"][:200] if eo else "")
def fmt(x):
    if x is None: return "-"
    if isinstance(x, float): return f"{x:.10g}" if abs(x) > 1e-3 or x == 0 else f"{x:.3e}"
    return str(x)
print("| example | # | IPOPT status | it | f | t[s] | caspar status | it | f | t[s] | rel diff | flags |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    r = list(r)
    r[5] = f"{r[5]:.3f}" if isinstance(r[5], float) else "-"
    r[9] = f"{r[9]:.3f}" if isinstance(r[9], float) else "-"
    r[10] = f"{r[10]:.1e}" if isinstance(r[10], float) else "-"
    print("| " + " | ".join(fmt(x) if not isinstance(x, str) else x for x in r) + " |")
