"""python logdiff.py ref.log other.log [--side]: first differing iteration row (cols: obj inf_pr inf_du lg(mu) ||d|| lg(rg) alpha_du alpha_pr ls)"""
import re, sys
def rows(fn): return [l.rstrip() for l in open(fn) if re.match(r'^ +[0-9]+[r ]? ', l)]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
names = "iter obj inf_pr inf_du lg(mu) ||d|| lg(rg) alpha_du alpha_pr ls".split()
for i, (x, y) in enumerate(zip(a, b)):
    if x.split() != y.split():
        cols = [names[j] for j, (p, q) in enumerate(zip(x.split(), y.split())) if p != q]
        print(f"first differing row {i}: cols {cols}\n  ref: {x}\n  oth: {y}"); break
else: print("no differing row in common prefix")
print(f"iters ref={len(a)-1} other={len(b)-1}; restoration ref rows={[i for i,l in enumerate(a) if re.match(r'^ +[0-9]+r',l)][:1]} other={[i for i,l in enumerate(b) if re.match(r'^ +[0-9]+r',l)][:1]}")
if '--side' in sys.argv:
    for i in range(max(len(a), len(b))):
        print(f"{a[i] if i < len(a) else '':<95s}| {b[i] if i < len(b) else ''}")
