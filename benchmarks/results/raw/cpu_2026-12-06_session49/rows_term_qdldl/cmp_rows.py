import csv, sys
def load(F):
    try: return {r["model"]+" "+r["size"]: r for r in csv.DictReader(open(f"/tmp/cr_out_{F}/results.csv"))}
    except FileNotFoundError: return {}
Fs = sys.argv[1:]
D = {F: load(F) for F in Fs}
keys = list(D[Fs[0]].keys())
tot = {F: [0, 0, 0] for F in Fs}   # its equal to IPOPT, sum |it - ipopt|, worse rel obj
for k in keys:
    r0 = D[Fs[0]][k]
    ii = int(r0["ipopt_iter"] or -1); fi = float(r0["ipopt_f"] or "nan")
    cells = []
    for F in Fs:
        r = D[F].get(k)
        if r is None: cells.append("-"); continue
        it = int(r["cpu_iter"] or -1); f = float(r["cpu_f"] or "nan")
        rel = abs(f - fi) / max(1, abs(fi))
        cells.append(f"{r['cpu_status'][:8]} {it:4d} {rel:.1e}")
        tot[F][0] += it == ii; tot[F][1] += abs(it - ii)
    if len(set(c.split()[1] if c != "-" else c for c in cells)) > 1 or True:
        print(f"{k:32s} IPOPT {ii:4d} | " + " | ".join(cells))
print({F: (t[0], t[1]) for F, t in tot.items()})
