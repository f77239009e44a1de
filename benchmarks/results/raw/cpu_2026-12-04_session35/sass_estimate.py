"""SASS instructions per kernel source line (nvdisasm -c -g of the kernel's cubin, whose
'//## File "...", line N' markers name the line of the instructions below them), per
copy (instructions / basic blocks holding the line), times the line's executions per
iteration (the line-count JSON) = an estimate of executed SASS instructions per
iteration.  Lines of the same source (an inlined helper) anywhere in the kernel are one
line here.  ONLY=<regex>: count only matching instructions."""
import collections, json, os, re, sys
sass, counts = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
only = re.compile(os.environ["ONLY"]) if os.environ.get("ONLY") else None
ins = collections.Counter(); blocks = collections.defaultdict(set)
cur = None; block = 0
for ln in open(sass):
    m = re.match(r'\s*//## File "([^"]+)", line (\d+)', ln)
    if m:
        cur = (m.group(1), int(m.group(2))); continue
    if re.match(r'\s*\.L_x_\d+:', ln):
        block += 1; continue
    m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(.*?);', ln)
    if not m or cur is None:
        continue
    text = m.group(1)
    if only and not only.search(text):
        continue
    ins[cur] += 1; blocks[cur].add(block)
    if re.search(r'\bBRA\b|\bEXIT\b|\bRET\b|\bCALL\b', text):
        block += 1
per = {k: n / len(blocks[k]) for k, n in ins.items()}
d = json.load(open(counts)); it = d["iters"]
cnt = {(f, l): c / it for f, l, c in d["counts"]}
dyn = {k: per[k] * c for k, c in cnt.items() if k in per}
tot = sum(dyn.values())
byfile = collections.Counter()
for (f, l), v in dyn.items(): byfile[os.path.basename(f)] += v
print(f"estimated SASS instructions per iteration: {tot:,.0f}")
for f, v in byfile.most_common(): print(f"  {f:18s} {v:12,.0f} {100*v/tot:5.1f}%")
src = {}
print("top lines: SASS per execution x executions per iteration")
for (f, l), v in sorted(dyn.items(), key=lambda kv: -kv[1])[:top]:
    if f not in src: src[f] = open(f).read().splitlines()
    print(f"{v:10,.0f} {100*v/tot:5.1f}% {os.path.basename(f)}:{l} [{per[(f,l)]:.1f} x {cnt[(f,l)]:.0f}] {src[f][l-1].strip()[:80]}")
