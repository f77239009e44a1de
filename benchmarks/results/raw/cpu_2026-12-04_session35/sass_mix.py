import collections, json, os, re, sys
sass, counts = sys.argv[1], sys.argv[2]
rows = []; blocks = collections.defaultdict(set); cur = None; block = 0
for ln in open(sass):
    m = re.match(r'\s*//## File "([^"]+)", line (\d+)', ln)
    if m: cur = (m.group(1), int(m.group(2))); continue
    if re.match(r'\s*\.L_x_\d+:', ln): block += 1; continue
    m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)', ln)
    if not m or cur is None: continue
    op = m.group(2).split('.')[0]
    rows.append((cur, op)); blocks[cur].add(block)
    if op in ('BRA', 'EXIT', 'RET', 'CALL'): block += 1
d = json.load(open(counts)); it = d["iters"]
cnt = {(f, l): c / it for f, l, c in d["counts"]}
mix = collections.Counter()
for k, op in rows:
    if k in cnt: mix[op] += cnt[k] / len(blocks[k])
tot = sum(mix.values())
print(f"total {tot:,.0f}")
for op, v in mix.most_common(25): print(f"{op:10s} {v:12,.0f} {100*v/tot:5.1f}%")
