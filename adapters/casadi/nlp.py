"""The ``nlpsol`` problem dict -> :class:`~caspar_backend.model.NLPModel`.

    nlp = {'x': x, 'f': f, 'g': g, 'p': p}       (SX or MX, as casadi.nlpsol takes)

    min_x f(x; p)   s.t.  lbg <= g(x; p) <= ubg,   lbx <= x <= ubx

Conventions follow ``casadi.nlpsol``: the decision variables are the
nonzeros of ``x`` (column-major), the constraints the nonzeros of ``g``, the
parameters the nonzeros of ``p``; defaults are ``x0 = 0``, ``p = 0``,
``lbx = lbg = -inf``, ``ubx = ubg = +inf`` (``casadi.nlpsol_default_in``).
Bounds may be scalars (broadcast), sequences, NumPy arrays or DM.

Variable and parameter names come from the symbols: an SX element keeps its
own name (``x_0``), an MX symbol ``X`` gives ``X[0], X[1], ...`` (a plain
``X`` when scalar); anything else falls back to ``x[i]`` / ``p[i]``; constraints: ``g[i]``.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np

import casadi as ca

from caspar_backend.blocks import TemplateBlock
from caspar_backend.errors import ModelError, NonFiniteError
from caspar_backend.expr import Graph
from caspar_backend.model import NLPModel

from .bulk import read_bulk
from .chains import assertion_sites
from .sxdecode import program_text
from .sxexport import read as read_program
from .names import IndexedNames, SXNames
from .compiler import Compiler, MXCallProgram, make_function
from .opaque import OpaqueRegistry
from .program import SXProgram
from .sums import flatten_sums

_KEYS = ("x", "f", "g", "p")
#: SX programs of at least this many instructions go to the bulk reader by default
#: (None: only when asked, ``bulk=True``).  Both readers give the same model bit for bit
#: (:mod:`.bulk`), so this is a speed choice: measured read + Problem CPU time, bulk over
#: per node, 0.9-1.5 at 1,000-15,000 instructions (fixed costs: casadi's text export,
#: the NumPy passes, one scratch build per template class), 0.2-0.9 from 20,000 on
#: (docs/setup-bulk-reader.md)
BULK_MIN_INSTRUCTIONS = 20_000
#: constraints whose additive spine has fewer terms keep their binary chain
_MIN_CON_TERMS = 8


def casadi_to_model(nlp, *, x0=None, lbx=None, ubx=None, lbg=None, ubg=None, p=None,
                    expand: bool = True, keep_calls: bool = True,
                    blocks: bool = True, bulk: bool | None = None,
                    _function=None, _program=None) -> NLPModel:
    """Build the :class:`NLPModel` of an ``nlpsol`` problem dict (see module doc).

    ``expand`` must be True for MX input: caspar reads SX instruction programs,
    so MX is lowered with casadi's ``expand()`` (the name mirrors nlpsol's
    option).  ``keep_calls`` (default) keeps the structure of ``Function.map``
    (also nested, or inside called Functions): each mapped Function is compiled
    once and replayed per instance, so the instances form one pattern group;
    every other call is inlined by ``expand()``.  ``keep_calls=False`` expands
    the whole MX graph as casadi would (N copies read one by one).

    ``blocks`` (default) hands the instances of a top-level map call whose
    arguments are leaves (entries of x, p, constants) and whose results reach
    ``g``/``f`` affinely to caspar as :class:`~caspar_backend.blocks.TemplateBlock` s
    (the body built once, tables gathered with NumPy; :mod:`.mapblocks`);
    ``blocks=False`` replays them as expressions (same values, slower).

    ``bulk``: ``True`` reads an SX problem with the bulk reader (:mod:`.bulk`: the
    instruction program decoded into arrays, each root split into the per-node
    reader's instances, grouped into its pattern groups as template blocks, no Python
    step per instruction; the same model bit for bit, and a program it cannot
    reproduce is read per node); ``False`` reads every instruction into caspar's DAG
    (the reference path, and the escape hatch); ``None`` (default) the bulk reader
    from :data:`BULK_MIN_INSTRUCTIONS` instructions on.

    Functions without an SX program (interpolants, integrators, ``Callback`` s, external
    functions) become opaque calls evaluated through casadi (:mod:`.opaque`; the model's
    ``opaque``, ``docs/casadi-opaque-functions.md``).  ``expand()`` drops MX assertions:
    ``meta["assertions"]`` names their Functions, which nlpsol checks (:mod:`.assertions`).

    Raises :class:`~caspar_backend.errors.ModelError` (bad dict, shapes, bounds,
    free symbols), :class:`~caspar_backend.errors.NonFiniteError` (NaN bounds,
    non-finite ``x0``/``p``) and :class:`~caspar_backend.errors.UnsupportedOpError`
    (an op or a Function caspar cannot read), each naming the culprit.
    """
    x, f, g, pp, sym = _unpack(nlp)
    if sym is ca.MX and not expand:
        raise ModelError("expand=False: caspar reads SX instruction programs, so MX input "
                         "must be expanded (pass expand=True, the default)")
    n, m, q = int(x.nnz()), int(g.nnz()), int(pp.nnz())
    # numbers first: a wrong length should not wait for a long extraction
    bounds = _call_values(n, m, q, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, x0=x0, p=p)
    graph = Graph()
    var_names = _names(x, "x")
    param_names = _names(pp, "p")
    graph.var_names, graph.param_names = var_names, param_names
    registry = OpaqueRegistry()
    registry.bind(graph, n)
    compiler = Compiler(keep_calls=keep_calls, opaque=registry)
    with _no_gc():
        if sym is ca.SX:
            fn = _function if _function is not None else _sx_function(x, pp, f, g)
            if bulk or (bulk is None and BULK_MIN_INSTRUCTIONS is not None
                        and fn.n_instructions() >= BULK_MIN_INSTRUCTIONS):
                found = read_bulk(fn, f, g, _program)
                if found is not None:
                    return _bulk_model(found, graph, m, bounds, var_names, param_names)
            prog = SXProgram(fn, compiler)
        else:
            prog = compiler.compile_mx("caspar_nlp", [x, pp], [f, g], inline_wrappers=blocks,
                                       top_level=True)
        leaves = [graph.var(i) for i in range(n)] + [graph.param(k) for k in range(q)]
        found = []
        try:
            if blocks and isinstance(prog, MXCallProgram):
                out, found = prog.run_blocks(graph, leaves, n)
            else:
                out = prog.run(graph, leaves)
        except NonFiniteError as exc:  # the graph names no output: find them
            msg = str(exc)
            if not msg.endswith(_ANON):
                raise
            raise NonFiniteError(msg[:-len(_ANON)] + _non_finite_outputs(x, pp, f, g)) \
                from None
        nf = int(f.nnz())
        objective = out[0] if nf else graph.const(0.0)
        roots = [objective] + out[nf:]
        objective, *constraints = flatten_sums(
            graph, roots, [3] + [_MIN_CON_TERMS] * (len(roots) - 1))
        meta = {"casadi_type": sym.__name__,
                "functions_compiled": compiler.stats["functions"],
                "maps": list(compiler.stats["maps"]),
                # the Functions whose MX assertions expand() dropped (.assertions)
                "assertions": assertion_sites(*compiler.top_level) if sym is ca.MX else []}
        opaque = _opaque_calls(registry, graph, var_names)
        if not found:
            return NLPModel(
                graph, objective, constraints, **bounds,
                var_names=var_names, con_names=[f"g[{i}]" for i in range(m)],
                param_names=param_names, source="casadi", meta=meta, opaque=opaque)
        con_blocks, obj_blocks = _split_blocks(found, nf)
        absorbed = np.zeros(m, dtype=bool)
        con_blocks = [nb for b in con_blocks
                      for nb in _absorb_leaf_rests(b, constraints, absorbed, m, con_blocks)]
        # a row whose flat part is 0 (or went into a block) needs no flat term
        covered = np.zeros(m, dtype=bool)
        for b in con_blocks:
            covered[b.rows] = True
        keep = [k for k, c in enumerate(constraints)
                if not absorbed[k] and not (covered[k] and c.op == "const" and c.attr == 0.0)]
        meta["map_blocks"] = list(prog.block_stats)
        return NLPModel(
            graph, objective, [constraints[k] for k in keep], **bounds,
            var_names=var_names, con_names=[f"g[{i}]" for i in range(m)],
            param_names=param_names, source="casadi", meta=meta,
            constraint_blocks=con_blocks, objective_blocks=obj_blocks,
            constraint_rows=np.asarray(keep, dtype=np.int64), n_rows=m, opaque=opaque)


def _opaque_calls(registry, graph, var_names):
    """The model's opaque calls (:mod:`.opaque`), or None; names the auxiliary
    leaves in the graph's messages (``I#3.xf[1]``: nonzero 1 of output xf of the
    fourth call of I)."""
    if not registry:
        return None
    calls = registry.calls()
    n, aux = len(var_names), calls.aux_names
    graph.var_names = lambda i: var_names[i] if i < n else aux[i - n]
    return calls


def from_casadi(nlp, *, x0=None, lbx=None, ubx=None, lbg=None, ubg=None, p=None,
                expand: bool = True, keep_calls: bool = True, blocks: bool = True,
                bulk: bool | None = None, function=None):
    """A :class:`~caspar_backend.problem.Problem` for an ``nlpsol`` problem dict.

    Same arguments as :func:`casadi_to_model`; ``x0``, bounds and ``p`` as in
    ``casadi.nlpsol``'s call.  ``function``: the SX problem's :func:`problem_function`
    when the caller has built it already (nlpsol stores it for ``save``); else built
    here.  A large SX program's compiled problem is kept on disk for the next process
    (:mod:`.problem_cache`).
    """
    from caspar_backend.problem import Problem

    from . import problem_cache

    values = dict(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, p=p)
    opts = dict(expand=expand, keep_calls=keep_calls, blocks=blocks, bulk=bulk)
    x, f, g, pp, sym = _unpack(nlp)
    fn = function if sym is ca.SX else None
    key = prog = None
    if sym is ca.SX and problem_cache.enabled():
        if fn is None:
            fn = _sx_function(x, pp, f, g)
        # the key, and the bulk reader's input: the instruction arrays, else the text
        prog, size = read_program(fn), fn.n_instructions()
        if prog is None and size >= problem_cache.MIN_INSTRUCTIONS:
            prog = program_text(fn)
        if prog is not None:
            key = problem_cache.program_key(
                prog, [x.sparsity(), pp.sparsity(), f.sparsity(), g.sparsity()], opts)
            if size < problem_cache.MIN_INSTRUCTIONS:   # kept in this process, by names too
                key = problem_cache.memory_key(key, x.serialize(), pp.serialize())
            problem = problem_cache.load(key, size)
            if problem is not None:
                problem_cache.set_values(problem, _call_values(
                    int(x.nnz()), int(g.nnz()), int(pp.nnz()), **values), _names(x, "x"),
                    _names(pp, "p"))
                problem.model.meta["problem_cache"] = "hit"
                return problem
    problem = Problem(casadi_to_model(nlp, **values, **opts, _function=fn, _program=prog))
    if key is not None:
        # (the saved copy says "stored"; a load sets "hit")
        problem.model.meta["problem_cache"] = "stored"
        if not problem_cache.store(key, problem, size):
            problem.model.meta["problem_cache"] = "not stored"
    return problem


def problem_function(nlp):
    """The Function ``caspar_nlp: (x, p) -> (f, g)`` (inputs and outputs so named) the
    readers read an SX ``nlpsol`` problem dict from, or None for MX; missing entries as
    :func:`casadi_to_model` fills them."""
    x, f, g, pp, sym = _unpack(nlp)
    return _sx_function(x, pp, f, g) if sym is ca.SX else None


def _sx_function(x, pp, f, g):
    """:func:`problem_function` of the unpacked entries: every instruction its own work
    slot (the bulk reader resolves reads without sorting, sxdag; the per-node reader
    reads either layout)."""
    return make_function("caspar_nlp", [x, pp], [f, g], {"live_variables": False},
                         (["x", "p"], ["f", "g"]))


# ------------------------------------------------------------------- helpers
def _call_values(n, m, q, *, lbx, ubx, lbg, ubg, x0, p) -> dict:
    """The call's bounds, ``x0`` and ``p`` as float64 vectors of the problem's lengths
    (missing: infinite bounds, zeros), checked by :func:`_vector`."""
    return dict(lbx=_vector("lbx", lbx, n, -np.inf), ubx=_vector("ubx", ubx, n, np.inf),
                lbg=_vector("lbg", lbg, m, -np.inf), ubg=_vector("ubg", ubg, m, np.inf),
                x0=_vector("x0", x0, n, 0.0), p=_vector("p", p, q, 0.0))


def _bulk_model(found, graph, m, bounds, var_names, param_names):
    """The NLPModel of a :class:`~.bulk.BulkRead`: the per-node reader's pattern groups
    as blocks, nothing left flat."""
    meta = {"casadi_type": "SX", "functions_compiled": 0, "maps": [],
            "bulk": dict(found.stats)}
    return NLPModel(
        graph, graph.const(0.0), [], **bounds,
        var_names=var_names, con_names=IndexedNames("g", m),
        param_names=param_names, source="casadi", meta=meta,
        constraint_blocks=found.constraint_blocks,
        objective_blocks=found.objective_blocks,
        constraint_rows=np.zeros(0, np.int64), n_rows=m)


def _absorb_leaf_rests(b, constraints, absorbed, m, all_blocks) -> list:
    """``b`` with the flat part ``c * x_j`` of its rows moved into the template.

    A defect row ``g = F(x_k, u_k) - x_{k+1}`` arrives as a block instance
    ``F(...)`` plus the flat term ``-x_{k+1}``; when that term is a variable
    times a constant and the row has no other block instance, the instance
    becomes ``F(...) + c * var(extra)`` (one group instead of a block plus a
    flat group).  Marks the rows taken in ``absorbed``; returns the blocks
    replacing ``b`` (instances without such a term stay in ``b``).
    """
    per_row = np.zeros(m, dtype=np.int64)
    for other in all_blocks:
        per_row += np.bincount(other.rows, minlength=m)
    N = b.size
    xi = np.full(N, -1, dtype=np.int64)
    cf = np.zeros(N)
    for k, r in enumerate(b.rows.tolist()):
        if per_row[r] != 1 or absorbed[r]:
            continue
        c = constraints[r]
        if c.op == "var":
            xi[k], cf[k] = c.attr, 1.0
        elif c.op == "neg" and c.args[0].op == "var":
            xi[k], cf[k] = c.args[0].attr, -1.0
        elif c.op == "mul" and c.args[0].op == "const" and c.args[1].op == "var":
            xi[k], cf[k] = c.args[1].attr, c.args[0].attr
        elif c.op == "mul" and c.args[1].op == "const" and c.args[0].op == "var":
            xi[k], cf[k] = c.args[0].attr, c.args[1].attr
    take = np.flatnonzero(xi >= 0)
    if not take.size:
        return [b]
    absorbed[b.rows[take]] = True
    g = Graph()
    image = {"var": g.var, "param": g.param, "data": g.data}
    from caspar_backend.rebuild import rebuild

    root = rebuild([b.root], g, lambda v: image[v.op](v.attr) if v.op in image
                   else g.const(v.attr))[0]
    vt = np.vstack([b.var_table[:, take], xi[None, take]])
    dt = b.data_table[:, take]
    c = cf[take]
    extra = g.var(b.var_table.shape[0])
    if np.all(c == c[0]):
        term = g.mul(g.const(float(c[0])), extra)
    else:
        term = g.mul(g.data(dt.shape[0]), extra)
        dt = np.vstack([dt, c[None, :]])
    out = [TemplateBlock(g, g.add(root, term), vt, b.param_table[:, take], dt,
                         rows=b.rows[take], name=b.name)]
    rest = np.flatnonzero(xi < 0)
    if rest.size:
        out.append(b.subset(rest))
    return out


def _split_blocks(found, nf) -> tuple[list, list]:
    """Blocks whose rows are output positions (``nf`` objective nonzeros, then
    g) -> (constraint blocks with g rows, objective blocks)."""
    con, obj = [], []
    for b in found:
        to_f = b.rows < nf
        if to_f.any():
            o = b.subset(np.flatnonzero(to_f))
            o.rows = None
            obj.append(o)
        if not to_f.all():
            c = b.subset(np.flatnonzero(~to_f))
            c.rows = c.rows - nf
            con.append(c)
    return con, obj


@contextmanager
def _no_gc():
    """Pause the cyclic garbage collector.  Extraction allocates ~10 objects per
    node and frees almost none; with the collector on, its generation scans over
    the growing heap cost about a third of the extraction time."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def as_symbolic(v):
    """``v`` itself, or the SX/MX an object converts to through casadi's ``__SX__`` /
    ``__MX__`` protocol (casadi.tools' ``struct_symSX`` / ``struct_symMX`` and their
    expression structs), as casadi's own typemaps convert it for ``nlpsol``."""
    if isinstance(v, (ca.SX, ca.MX, ca.DM)):
        return v
    for method in ("__SX__", "__MX__"):
        convert = getattr(v, method, None)
        if callable(convert):
            return convert()
    return v


def _unpack(nlp):
    """``(x, f, g, p, SX|MX)`` with missing entries filled and shapes checked."""
    if not isinstance(nlp, dict):
        raise ModelError(f"expected the nlpsol problem dict {{'x', 'f', 'g', 'p'}}, got "
                         f"{type(nlp).__name__}")
    unknown = sorted(set(nlp) - set(_KEYS))
    if unknown:
        raise ModelError(f"unknown keys {unknown} in the problem dict (allowed: x, f, g, p)")
    if "x" not in nlp:
        raise ModelError("the problem dict has no 'x'")
    nlp = {k: as_symbolic(v) for k, v in nlp.items()}
    x = nlp["x"]
    if isinstance(x, ca.SX):
        sym = ca.SX
    elif isinstance(x, ca.MX):
        sym = ca.MX
    else:
        raise ModelError(f"'x' must be casadi SX or MX, got {type(x).__name__}")
    parts = {}
    for key in ("f", "g", "p"):
        v = nlp.get(key)
        if v is None:
            v = sym(1, 1) if key == "f" else sym(0, 1)
        elif isinstance(v, (ca.SX, ca.MX)):
            if not isinstance(v, sym):
                raise ModelError(f"'{key}' is {type(v).__name__} but 'x' is {sym.__name__}; "
                                 "use one symbol type")
        else:
            try:
                v = sym(ca.DM(v))
            except (NotImplementedError, RuntimeError, TypeError):
                raise ModelError(f"'{key}' must be {sym.__name__}, DM or a number, got "
                                 f"{type(v).__name__}") from None
        parts[key] = v
    f, g, pp = parts["f"], parts["g"], parts["p"]
    if f.numel() == 0:
        # an empty objective (0x0: casadi's NlpBuilder of an NL file without one, a
        # square system) is casadi's and IPOPT's zero objective
        f = parts["f"] = sym(1, 1)
    if f.numel() != 1:
        raise ModelError(f"'f' must be scalar, got shape {f.size1()}x{f.size2()}")
    for key, v in (("x", x), ("p", pp)):
        if v.nnz() != v.numel() or not v.is_valid_input():
            raise ModelError(f"'{key}' must be a dense vector of symbols (a symbol or a "
                             "concatenation of symbols)")
    return x, f, g, pp, sym


def _names(v, base) -> list:
    """Per-nonzero names of a symbolic vector ``v`` (module doc)."""
    n = int(v.nnz())
    if isinstance(v, ca.SX):
        # _unpack checked is_valid_input(): every nonzero is a distinct symbol
        return SXNames(v)
    prims = v.primitives() if n else []
    if prims and all(pr.is_symbolic() for pr in prims) and sum(pr.nnz() for pr in prims) == n:
        names = []
        for pr in prims:
            k = pr.nnz()
            names += [pr.name()] if k == 1 and pr.numel() == 1 else \
                [f"{pr.name()}[{j}]" for j in range(k)]
        return names
    return [f"{base}[{i}]" for i in range(n)]


def _vector(name, value, size, default) -> np.ndarray:
    """A float64 vector of length ``size`` from None/scalar/sequence/DM."""
    if value is None:
        return np.full(size, float(default))
    if isinstance(value, (ca.DM, ca.SX, ca.MX)):
        if not isinstance(value, ca.DM):
            raise ModelError(f"{name} must be numeric, got a symbolic {type(value).__name__}")
        value = value.full().ravel(order="F")
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{name} must be numeric, got {type(value).__name__}") from None
    a = a.ravel(order="F")
    if a.size == 1:
        return np.full(size, float(a[0]))
    if a.size != size:
        what = {"x0": "x", "lbx": "x", "ubx": "x", "lbg": "g", "ubg": "g", "p": "p"}[name]
        raise ModelError(f"{name} has {a.size} entries, expected {size} (one per nonzero "
                         f"of '{what}')")
    return a.copy()


#: the tail of the graph's message for a NaN/Inf constant, which names no output
_ANON = " in an expression"


def _non_finite_outputs(x, pp, f, g) -> str:
    """' in constraint g[1], g[4]' / ' in the objective': the outputs whose expression
    holds a NaN/Inf constant.  Error path only: one small SX Function per output."""
    found = []
    outs = [("the objective", f[i]) for i in range(f.nnz())] + \
        [(f"g[{i}]", g[i]) for i in range(g.nnz())]
    for label, e in outs:
        fn = ca.Function("caspar_row", [x, pp], [e])
        fn = fn.expand() if not fn.is_a("SXFunction") else fn
        if any(fn.instruction_id(k) == ca.OP_CONST
               and not np.isfinite(fn.instruction_constant(k))
               for k in range(fn.n_instructions())):
            found.append(label)
    if not found:
        return " in an expression"
    cons = [s for s in found if s.startswith("g[")]
    parts = (["the objective"] if found[0] == "the objective" else []) + (
        [("constraint " if len(cons) == 1 else "constraints ") + ", ".join(cons[:5])
         + (f" and {len(cons) - 5} more" if len(cons) > 5 else "")] if cons else [])
    return " in " + " and ".join(parts)


def nlp_dict(nlp) -> dict:
    """The ``{'x', 'f', 'g', 'p'}`` dict of an ``nlpsol`` problem given as a dict or as
    a casadi Function with inputs ``x, p`` and outputs ``f, g`` (the nlpsol oracle form;
    its body is kept as one call, replayed by the adapter)."""
    if isinstance(nlp, dict):
        return {k: as_symbolic(v) for k, v in nlp.items()}
    if isinstance(nlp, ca.Function):
        names_in, names_out = nlp.name_in(), nlp.name_out()
        if "x" not in names_in or "f" not in names_out and "g" not in names_out:
            raise ModelError(f"an nlpsol Function must have inputs 'x' (and 'p') and outputs "
                             f"'f'/'g'; {nlp.name()!r} has {names_in} -> {names_out}")
        syms = {k: ca.MX.sym(k, nlp.sparsity_in(k)) for k in names_in}
        out = nlp.call(syms)
        d = {k: syms[k] for k in ("x", "p") if k in syms}
        d.update({k: out[k] for k in ("f", "g") if k in out})
        return d
    if isinstance(nlp, ca.NlpBuilder):
        # casadi's nlpsol(name, solver, NlpBuilder) (an AMPL .nl file read by import_nl)
        return {"x": ca.vertcat(*nlp.x), "f": nlp.f, "g": ca.vertcat(*nlp.g)}
    if isinstance(nlp, str):
        raise ModelError("nlpsol(..., 'caspar', <file name>) is not supported: pass the "
                         "problem dict {'x', 'f', 'g', 'p'}")
    raise ModelError(f"expected the nlpsol problem dict {{'x', 'f', 'g', 'p'}}, got "
                     f"{type(nlp).__name__}")
