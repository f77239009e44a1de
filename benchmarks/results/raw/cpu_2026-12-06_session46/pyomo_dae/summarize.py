import json, glob, sys
d = sys.argv[1]
for f in sorted(glob.glob(f'{d}/*.json')):
    r = json.load(open(f)); i = r.get('ipopt', {}); c = r.get('caspar', {})
    if 'name' not in r: continue
    fmt = lambda v: f'{v:.10g}' if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
    print('|', r['name'], '|', r['n_vars_free'], '/', r['n_cons'], '|', i.get('nx'), '/', i.get('ng'), '|', i.get('status'), '|', i.get('iters'),
          '|', c.get('status'), '|', c.get('iters_log'), '(stats:', c.get('iters_stats'), ') |', fmt(i.get('obj')), '|', fmt(c.get('obj')),
          '|', fmt(r.get('rel_obj_diff_pure')), '|', fmt(r.get('max_abs_dx')), r.get('worst_var'), '|',
          fmt(i.get('t_build')), '+', fmt(i.get('t_solve')), '|', fmt(c.get('wall')), '|', c.get('plugin'), '|')
