"""Static PTX instructions per source line of each out-of-line kernel (the function's own
file; the file ids of .loc are per function here, so each function's own id is found from
its source line range), times the line's executions per iteration (line-count JSON) =
an estimate of executed PTX instructions per iteration.  Inlined callees' lines are
lumped per function as 'inlined'.  MODE=copy divides a line's instructions by the basic
blocks holding it (unrolled copies)."""
import re, sys, json, collections, ast, glob, os
ptx = open(sys.argv[1]).read().splitlines()
KDIR = '/work/main/caspar_backend/compiled/'
ranges = {}   # (module short, funcname) -> (file, lo, hi)
for f in glob.glob(KDIR + 'kernels/*.py') + [KDIR + 'cuda/launch.py']:
    t = ast.parse(open(f).read())
    mod = os.path.basename(f)[:-3]
    for n in ast.walk(t):
        if isinstance(n, ast.FunctionDef):
            ranges[(mod, n.name)] = (f, n.lineno, n.end_lineno)
funcs = []   # (name key, list of (fileid, line, blockno))
cur_f = None; loc = None; block = 0
for ln in ptx:
    s = ln.strip()
    if ln.startswith(('.weak .func', '.func', '.visible .entry')):
        m = re.search(r'kernels\d+([A-Za-z_]\w*?)(\d+)(\w+?)B\d', ln) or re.search(r'cuda\d+launch\d+(\w+?)B\d', ln)
        if m and m.re.pattern.startswith('kernels'):
            mod = m.group(1); ln_ = int(m.group(2)); name = m.group(3)[:ln_]
            key = (mod, name)
        elif m:
            key = ('launch', m.group(1)[2:] if m.group(1)[:1].isdigit() else m.group(1))
        else:
            key = ('?', '?')
        cur_f = [key, []]; funcs.append(cur_f); loc = None; continue
    if s.endswith(':') or s.startswith(('bra', '@')): block += 1
    m = re.match(r'\.loc\s+(\d+)\s+(\d+)', s)
    if m: loc = (m.group(1), int(m.group(2))); continue
    if cur_f is None or loc is None or not s or s.startswith(('.', '//', '{', '}', '$', ')', '(')) or s.endswith(':'):
        continue
    cur_f[1].append((loc[0], loc[1], block))
MODE = os.environ.get('MODE', 'copy')
static = collections.defaultdict(list)   # (file, line) -> per-function per-execution estimates
inl = collections.Counter()
for key, ins in funcs:
    if not ins or key not in ranges: continue
    f, lo, hi = ranges[key]
    byid = collections.Counter(i for i, l, b in ins if lo <= l <= hi)
    if not byid: continue
    own = byid.most_common(1)[0][0]
    per = collections.Counter(); blocks = collections.defaultdict(set)
    for i, l, b in ins:
        if i == own and lo <= l <= hi:
            per[l] += 1; blocks[l].add(b)
        else:
            inl[key] += 1
    for l, n in per.items():
        static[(f, l)].append(n / len(blocks[l]) if MODE == 'copy' else n)
static = {k: sum(v) / len(v) for k, v in static.items()}
d = json.load(open(sys.argv[2])); it = d['iters']
dyn = collections.Counter(); byfn = collections.Counter()
def fn_of(f, l):
    best = None
    for (mod, name), (ff, lo, hi) in ranges.items():
        if ff == f and lo <= l <= hi and (best is None or lo > best[0]): best = (lo, name)
    return best[1] if best else '?'
for f, l, c in d['counts']:
    if (f, l) in static:
        dyn[(f, l)] = static[(f, l)] * c / it
tot = sum(dyn.values())
for (f, l), v in dyn.items(): byfn[fn_of(f, l)] += v
print(f"estimated PTX instructions per iteration (own lines of out-of-line kernels): {tot:,.0f}")
for k, v in byfn.most_common(14): print(f"  {k:20s} {v:12,.0f} {100*v/tot:5.1f}%")
src = {}
print("top lines (instructions per execution x executions per iteration):")
cnt = {(f, l): c / it for f, l, c in d['counts']}
for (f, l), v in dyn.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 30):
    if f not in src: src[f] = open(f).read().splitlines()
    print(f"{v:10,.0f} {100*v/tot:5.1f}% {os.path.basename(f)}:{l} [{static[(f,l)]:.1f} x {cnt[(f,l)]:.0f}] {src[f][l-1].strip()[:80]}")
