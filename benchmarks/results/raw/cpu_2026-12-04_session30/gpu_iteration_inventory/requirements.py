"""Caspar-issued device operations per iteration by what their segment needs before capture.

    python requirements.py trace_case9241_pegase.json
"""
import collections, sys
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from analyse_trace import segments, eval_launches
from classify import varying, load

t = load(sys.argv[1])
lay = t['layout']
its = [i for i in t['iters'] if not i.get('last')][1:]
n = len(its)
cat = collections.Counter()
pieces = 0
for i in its:
    for evs, r in segments(i['events']):
        ops = 0
        cud = var = alloc = 0
        for e in evs:
            k = e['kind']
            if k in ('fused', 'raw', 'cupy'):
                ops += 1
            elif k == 'eval':
                ops += eval_launches(e['name'], lay)
            elif k == 'cudss':
                ops += 2 if 'SOLVE' in e['name'] else 1
                cud += 1
            if k == 'alloc' or e.get('alloc') or (k == 'eval' and e['name'] == 'obj_unread'):
                alloc += 1
            if k in ('fused', 'cupy') and varying(e):
                var += 1
        if cud:
            c = 'C: contains cuDSS phase(s)'
            pieces += cud      # the segment splits around each eager cuDSS call
        elif var:
            c = 'B: needs device scalars (+ preallocation)'
        elif alloc:
            c = 'A: needs preallocation only'
        else:
            c = '0: capturable as it is'
        cat[c] += ops
        pieces += 1
for k in sorted(cat):
    print(f"{cat[k] / n:7.2f}  {k}")
print(f"{sum(cat.values()) / n:7.2f}  total caspar-issued operations per iteration")
print(f"{pieces / n:7.2f}  graph launches per iteration if every segment is one graph and "
      f"each cuDSS phase runs eagerly between graphs")
