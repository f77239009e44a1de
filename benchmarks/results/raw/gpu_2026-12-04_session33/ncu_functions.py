import csv, gzip, collections, bisect, sys
rows = list(csv.reader(gzip.open(sys.argv[1],'rt')))
hdr = rows[1]; data = rows[2:]
ia, isrc, iss, iex = hdr.index("Address"), hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
addr = [int(r[ia],16) for r in data]
tgt = lambda r: int(r[isrc].split()[-1],16)
calls = [(a, tgt(r)) for a, r in zip(addr, data) if ' CALL' in r[isrc] and r[isrc].split()[-1].startswith('0x')]
starts = sorted({addr[0]} | {t for _, t in calls})
fn = lambda a: starts[bisect.bisect_right(starts, a)-1]
callers = collections.defaultdict(set); callees = collections.defaultdict(collections.Counter)
for a, t in calls: callers[t].add(fn(a)); callees[fn(a)][t] += 1
agg = collections.defaultdict(lambda: [0,0,0])
for a, r in zip(addr, data):
    g = agg[fn(a)]; g[0]+=int(r[iss]); g[1]+=int(r[iex]); g[2]+=1
tot = sum(v[0] for v in agg.values()); tex = sum(v[1] for v in agg.values())
names = {s: 'f%02d' % i for i, s in enumerate(starts)}
print("SASS instructions", len(data), "samples", tot, "executed", tex)
for k,v in sorted(agg.items(), key=lambda kv:-kv[1][0])[:14]:
    print(names[k], "samples %5.1f%%  instr %5.1f%%  size %6d  called from %s  calls %s" % (100*v[0]/tot, 100*v[1]/tex, v[2], ','.join(sorted(names[c] for c in callers[k])), ','.join('%s x%d' % (names[c], n) for c, n in callees[k].most_common(5))))
