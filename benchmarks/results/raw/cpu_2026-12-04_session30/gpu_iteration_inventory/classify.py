"""Per-launch classification of a trace (trace_iteration.py) for graph capture.

    python classify.py trace_case9241_pegase.json
"""
import collections, json, sys
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from analyse_trace import segments, LAUNCH, eval_launches

vals = collections.defaultdict(set)


def load(path):
    """The trace at ``path``; fills ``vals`` (scalar values seen per site and parameter)."""
    t = json.load(open(path))
    vals.clear()
    for i in [i for i in t['iters'] if not i.get('last')][1:]:
        for e in i['events']:
            sc = e.get('scalars')
            if isinstance(sc, dict):
                for k, v in sc.items():
                    vals[(e['name'], e['site'], k)].add(v)
            elif sc:
                for j, v in enumerate(sc):
                    vals[(e['name'], e['site'], j)].add(v)
    return t
VARY_ALWAYS = {("fused", "axpy_into"), ("fused", "axpy")}   # alpha: different every iteration
# parameters that vary per iteration in general even when constant in this run
VARYING_PARAMS = {"mu", "tau", "a", "c1", "c2", "delta_w", "eps", "delta_c", "priv_on"}


def varying(e):
    sc = e.get('scalars')
    if isinstance(sc, dict):
        return sorted(k for k in sc if k in VARYING_PARAMS)
    if sc and e['kind'] == 'cupy':
        out = []
        for j, v in enumerate(sc):
            if len(vals[(e['name'], e['site'], j)]) > 1 or e['site'].startswith(('kkt/augmented.py:23', 'kkt/augmented.py:18', 'kkt/augmented.py:19', 'solver/linesearch.py')):
                out.append(f"arg{j}")
        return out
    return []


def temp_args(e):
    a = e.get('args')
    vs = a.values() if isinstance(a, dict) else (a or [])
    return any(isinstance(v, str) and (v.startswith('temp') or v.startswith('earlier')) for v in vs)




def main(path):
    t = load(path)
    lay = t['layout']
    its = [i for i in t['iters'] if not i.get('last')][1:]
    n = len(its)
    tot = collections.Counter()
    segc = collections.Counter()
    by_op = collections.Counter()
    for i in its:
        for evs, r in segments(i['events']):
            launches = [e for e in evs if e['kind'] in LAUNCH]
            nl = sum(eval_launches(e['name'], lay) if e['kind'] == 'eval' else
                     (3 if 'SOLVE' in e['name'] else 2) if e['kind'] == 'cudss' else 1 for e in launches)
            has_cudss = any(e['kind'] == 'cudss' for e in launches)
            has_var = any(varying(e) for e in launches)
            has_alloc = any(e['kind'] == 'alloc' or e.get('alloc') for e in evs) or any(
                e['kind'] == 'eval' and e['name'] == 'obj_unread' for e in evs)
            has_sync = any(e['kind'] == 'sync' for e in evs)
            key = ('cudss' if has_cudss else 'no-cudss', 'scalars' if has_var else 'no-scalars',
                   'alloc' if has_alloc else 'no-alloc', 'sync' if has_sync else 'no-sync')
            segc[key] += nl
            tot['segments'] += 1
            for e in launches:
                k = eval_launches(e['name'], lay) if e['kind'] == 'eval' else 1
                tot['launch'] += k
                v = varying(e)
                if v:
                    tot['launch_varying_scalar'] += 1
                    by_op[(e['kind'], e['name'], e['site'], tuple(v))] += 1
                if e.get('alloc'):
                    tot['launch_allocating'] += 1
                if temp_args(e):
                    tot['launch_reading_temp'] += 1
            for e in evs:
                if e['kind'] == 'alloc' or e.get('alloc'):
                    tot['alloc'] += 1
                if e['kind'] == 'eval' and e['name'] == 'obj_unread':
                    tot['alloc'] += 1
                if e['kind'] == 'sync':
                    tot['sync'] += 1
            if r is not None:
                tot['read'] += 1
    print(f"# {t['problem']} {t['size']}: {n} iterations (2nd on)")
    for k, v in tot.items():
        print(f"{k:24s} {v / n:7.2f} per iteration")
    print("\nlaunches per iteration by segment class (cudss?, varying scalars?, allocation?, sync?)")
    for k, v in sorted(segc.items(), key=lambda x: -x[1]):
        print(f"  {v / n:7.2f}  {k}")
    print("\nlaunches with per-iteration scalars passed by value")
    for k, v in sorted(by_op.items(), key=lambda x: -x[1]):
        print(f"  {v / n:5.2f}  {k}")


if __name__ == "__main__":
    main(sys.argv[1])
