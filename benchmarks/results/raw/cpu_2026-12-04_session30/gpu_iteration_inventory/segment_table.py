"""Per-segment table (launches between consecutive host reads) of a trace.

    python segment_table.py trace_case9241_pegase.json
"""
import collections, json, sys
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from analyse_trace import segments, eval_launches
from classify import varying, load

t = load(sys.argv[1])
lay = t['layout']
its = [i for i in t['iters'] if not i.get('last')][1:]
n = len(its)
short = lambda s: s.replace('solver/', '').replace('kkt/', '')
rows = collections.OrderedDict()
for i in its:
    prev = 'top'
    for evs, r in segments(i['events']):
        key = (prev, short(r['site']) if r else 'end (next top)')
        c = rows.setdefault(key, collections.Counter())
        c['occ'] += 1
        for e in evs:
            k = e['kind']
            if k == 'fused':
                c['fused'] += 1
            elif k == 'raw':
                c['raw'] += 1
            elif k == 'cupy':
                if e['name'].startswith('setitem x[...]') or e['name'] in ('fill', 'copy'):
                    c['copy/fill'] += 1
                else:
                    c['cupy kernel'] += 1
            elif k == 'eval':
                c['eval'] += eval_launches(e['name'], lay)
            elif k == 'cudss':
                if 'SOLVE' in e['name']:
                    c['copy/fill'] += 2      # copyto(b), x.copy()
                    c['cuDSS SOLVE'] += 1
                else:
                    c['copy/fill'] += 1      # copyto(values)
                    c['cuDSS FACT'] += 1
            elif k == 'sync':
                c['sync'] += 1
            if k == 'alloc' or e.get('alloc') or (k == 'eval' and e['name'] == 'obj_unread'):
                c['alloc'] += 1
            if k in ('fused', 'cupy') and varying(e):
                c['by-value var'] += 1
        prev = short(r['site']) if r else 'end'
cols = ['fused', 'raw', 'cupy kernel', 'copy/fill', 'eval', 'cuDSS FACT', 'cuDSS SOLVE',
        'alloc', 'by-value var', 'sync']
print(f"# {t['size']}: {n} iterations from the 2nd; values per occurrence, occ per iteration")
print('| after read | ending read | occ/it | ' + ' | '.join(cols) + ' |')
print('|' + '---|' * (3 + len(cols)))
for (a, b), c in rows.items():
    o = c['occ']
    print(f"| {a} | {b} | {o / n:.2f} | " + ' | '.join(
        f"{c[k] / o:.1f}".rstrip('0').rstrip('.') if c[k] else '' for k in cols) + ' |')
tot = collections.Counter()
for c in rows.values():
    tot.update(c)
print('| **per iteration** | | | ' + ' | '.join(f"{tot[k] / n:.2f}" for k in cols) + ' |')
