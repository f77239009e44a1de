"""Common harness: build a model twice, solve with caspar (SolverFactory) and IPOPT (casadi via NL)."""
import os, sys, re, time, json, tempfile, traceback
import numpy as np
sys.path.insert(0, '/work/main')
import pyomo.environ as pyo
import casadi as ca

EX = '/tmp/pyodae/examples/dae'
# CASPAR_NATIVE=1: `import caspar_backend` first, so SolverFactory('caspar') is caspar's own
# in-process plugin (LegacyCasparSolver); otherwise Pyomo's generic ASL plugin runs the
# `caspar` console script (/work/venv/bin/caspar) on an NL file.
NATIVE = bool(os.environ.get('CASPAR_NATIVE'))
if NATIVE:
    import caspar_backend
SUFFIX = '_native' if NATIVE else ''
LOGS = '/tmp/pyodae/logs' + SUFFIX
RESULTS = '/tmp/pyodae/results' + SUFFIX
os.makedirs(LOGS, exist_ok=True); os.makedirs(RESULTS, exist_ok=True)


def nl_problem_named(model):
    """Same as benchmarks.models.reference.nl_problem but also returning the NL writer's
    variable order (component names, from the write's symbol map 'v<i>')."""
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise ValueError(f"expected one active objective, found {len(objs)}")
    sense = 1 if objs[0].sense == pyo.minimize else -1
    fd, path = tempfile.mkstemp(suffix=".nl", dir='/tmp/pyodae/tmp')
    os.close(fd)
    try:
        _fn, sid = model.write(path, format="nl", io_options={"symbolic_solver_labels": False})
        smap = model.solutions.symbol_map[sid]
        nv = sum(1 for k in smap.bySymbol if re.fullmatch(r'v\d+', k))
        names = [smap.bySymbol[f'v{i}'].name for i in range(nv)]
        nl = ca.NlpBuilder()
        nl.import_nl(path, {"verbose": False})
    finally:
        for p in (path, path[:-3] + ".row", path[:-3] + ".col"):
            if os.path.exists(p):
                os.remove(p)
    x = ca.vertcat(*nl.x)
    g = ca.vertcat(*nl.g) if nl.g else ca.MX(0, 1) if isinstance(nl.f, ca.MX) else ca.SX(0, 1)
    nlp = {"x": x, "f": nl.f, "g": g}
    args = dict(x0=np.array(nl.x_init, float), lbx=np.array(nl.x_lb, float),
                ubx=np.array(nl.x_ub, float), lbg=np.array(nl.g_lb, float),
                ubg=np.array(nl.g_ub, float))
    return nlp, args, sense, names


def run_ipopt(model, tol=1e-8):
    out = {}
    t0 = time.perf_counter()
    nlp, args, sense, names = nl_problem_named(model)
    S = ca.nlpsol('S', 'ipopt', nlp, {'ipopt': {'tol': tol, 'print_level': 0}, 'print_time': False})
    t1 = time.perf_counter()
    r = S(**args)
    t2 = time.perf_counter()
    st = S.stats()
    out.update(status=st['return_status'], iters=int(st['iter_count']),
               obj=float(sense * float(r['f'])), t_build=t1 - t0, t_solve=t2 - t1,
               nx=int(nlp['x'].numel()), ng=int(nlp['g'].numel()))
    out['x'] = dict(zip(names, np.asarray(r['x']).ravel().tolist()))
    return out


def active_obj(model):
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    return objs[0] if len(objs) == 1 else None


def run_caspar(model, options=None, tee=False, logfile=None):
    out = {}
    opt = pyo.SolverFactory('caspar')
    t0 = time.perf_counter()
    try:
        kw = dict(tee=tee)
        if options: kw['options'] = options
        res = opt.solve(model, **kw)
        out['wall'] = time.perf_counter() - t0
        out['status'] = str(res.solver.termination_condition)
        out['solver_status'] = str(res.solver.status)
        out['message'] = str(res.solver.message)
        bb = res.solver.statistics.black_box.number_of_iterations
        out['iters_stats'] = getattr(bb, 'value', bb) if not type(bb).__name__ == 'UndefinedData' else None
        out['plugin'] = type(opt).__name__
        log = getattr(opt, '_log', '') or getattr(res, 'solver_log', '') or ''
        mm = re.findall(r'Number of Iterations\.*:\s*(\d+)', log)
        out['iters_log'] = int(mm[-1]) if mm else None
        if logfile:
            open(logfile, 'w').write(log)
        o = active_obj(model)
        try:
            out['obj'] = pyo.value(o) if o is not None else None
        except Exception as e:
            out['obj'] = f'ERR {e}'
    except Exception:
        out['wall'] = time.perf_counter() - t0
        out['status'] = 'EXCEPTION'
        out['traceback'] = traceback.format_exc()
        out['plugin'] = type(opt).__name__
        log = getattr(opt, '_log', '') or ''
        if logfile:
            open(logfile, 'w').write(log + '\n' + out['traceback'])
        out['log_tail'] = log[-3000:]
    return out


def model_size(model):
    nv = sum(1 for v in model.component_data_objects(pyo.Var, active=True) if not v.fixed)
    nc = sum(1 for c in model.component_data_objects(pyo.Constraint, active=True))
    return nv, nc


def compare(name, build, caspar_first=True):
    """build(): returns a fresh discretized model."""
    os.makedirs('/tmp/pyodae/tmp', exist_ok=True)
    rec = {'name': name}
    t = time.perf_counter(); m1 = build(); rec['t_build_model'] = time.perf_counter() - t
    rec['n_vars_free'], rec['n_cons'] = model_size(m1)
    rec['has_obj'] = active_obj(m1) is not None
    m2 = build()
    # IPOPT
    if rec['has_obj']:
        try:
            ip = run_ipopt(m2)
        except Exception:
            ip = {'status': 'EXCEPTION', 'traceback': traceback.format_exc()}
    else:
        ip = {'status': 'NO OBJECTIVE (not run)'}
    ipx = ip.pop('x', None)
    rec['ipopt'] = ip
    cs = run_caspar(m1, logfile=f'{LOGS}/{name}.caspar_default.log')
    rec['caspar'] = cs
    if ipx is not None and cs.get('status') != 'EXCEPTION':
        dmax, worst, missing = 0.0, None, 0
        for nm, xv in ipx.items():
            c = m1.find_component(nm)
            if c is None or c.value is None:
                missing += 1; continue
            d = abs(c.value - xv)
            if d > dmax: dmax, worst = d, nm
        rec['max_abs_dx'] = dmax; rec['worst_var'] = worst; rec['unmapped'] = missing
    if isinstance(ip.get('obj'), float) and isinstance(cs.get('obj'), (float, int)):
        rec['rel_obj_diff'] = abs(cs['obj'] - ip['obj']) / max(1.0, abs(ip['obj']))
        rec['rel_obj_diff_pure'] = abs(cs['obj'] - ip['obj']) / abs(ip['obj']) if ip['obj'] != 0 else None
    print(json.dumps(rec, indent=1, default=str), flush=True)
    with open(f'{RESULTS}/{name}.json', 'w') as fh:
        json.dump(rec, fh, indent=1, default=str)
    return rec, m1


def exec_prefix(path, stop, extra_globals=None, cwd=EX):
    """Exec the script text before the first line matching regex `stop` in a fresh namespace."""
    src = open(path).read().split('\n')
    cut = len(src)
    for i, l in enumerate(src):
        if re.search(stop, l):
            cut = i; break
    code = '\n'.join(src[:cut])
    g = {'__name__': '__driver__', '__file__': path}
    if extra_globals: g.update(extra_globals)
    old = os.getcwd(); os.chdir(cwd)
    sys.path.insert(0, cwd)
    try:
        # fresh import of modules the run_* scripts import
        for mod in ['Optimal_Control', 'Path_Constraint', 'Parameter_Estimation', 'disease_DAE',
                    'distill_DAE', 'stochpdegas_automatic']:
            sys.modules.pop(mod, None)
        exec(compile(code, path, 'exec'), g)
    finally:
        os.chdir(old)
    return g
