"""Compile any casadi Function into a :class:`~.program.Program`, each once.

Dispatch on the Function's class:

=============  ==============================================================
SXFunction     :class:`~.program.SXProgram` over its instruction program
Map            :class:`~.program.MapProgram`: the inner Function replayed N times
MXFunction     inlined one level, then split at the call nodes that reach a
               Map (:class:`MXCallProgram`); without such calls, ``expand()``
               to SX (which inlines every other call)
anything else  ``expand()`` through an MX wrapper (works for every Function
               casadi can evaluate on SX); a Function that ``expand()`` keeps
               as an SX call node of itself (interpolants, integrators,
               Callbacks, external code) is an opaque call
               (:class:`~.opaque.OpaqueProgram`, evaluated through casadi),
               or an UnsupportedOpError for a compiler without a registry
=============  ==============================================================

Only calls that reach a Map are split off: replaying a plain call per call
site costs more Python time than letting casadi's C++ ``expand()`` inline it,
and hash-consing makes the result the same DAG either way.

Except calls in a deep chain (single shooting: ``X = F(X, U[k])`` for k = 1..N).  Inlined,
the rows become N-fold compositions whose symbolic derivatives grow as N^3 (the
Hessian's N^2 entries are each a product over the chain): a 100-step rocket took 52 s
to set up where IPOPT takes 0.3 s.  So a Function (MX or SX body, not a Map) with calls
at a call depth of :data:`CHAIN_MIN_DEPTH` or more (each call reading, through any
operations, the result of the one before) is an opaque call, evaluated through casadi
as IPOPT evaluates it (:mod:`.opaque`: exact derivatives by the chain rule, level by
level).  A called Function of few inputs (:data:`CHAIN_UNIT_MAX_INPUTS`; a mapped
multiple-shooting step) is not searched for chains of its own: each of its instances
inlined is an expression of those few inputs.  The depth is found in one pass over the instruction program
(:func:`.chains.chained_functions`); a Function containing such a chain is split at its calls
like one reaching a Map, so nested chains are found too.

Splitting an MX graph at its calls.  With call ``j`` computing
``Y_j = F_j(A_j)``, replace every ``Y_j`` in the graph by a fresh symbol
(``graph_substitute``) and build one *outer* Function

    outer(inputs, Y_1..Y_K) = (A_1..A_K, outputs)

which has no calls left, so casadi's ``expand()`` gives one SX program.  A run
executes the outer program and runs call ``j`` (compiled once per Function,
replayed per call site) as soon as its arguments ``A_j`` exist, filling the
``Y_j`` input slots before any step reads them.  Listing the ``A_j`` first in
the outer outputs makes casadi's depth-first instruction order compute them
before the ``Y_j`` are read; the schedule is checked, and if casadi ever orders
differently the graph is expanded whole instead (correct, without the reuse).
"""

from __future__ import annotations

import warnings
from bisect import bisect_right

import casadi as ca
import numpy as np

from caspar_backend.errors import ModelError, UnsupportedOpError

from . import optable as T
from .chains import (CHAIN_UNIT_MAX_INPUTS, call_nodes, call_path_counts, instruction_ids,
                     chained_functions)
from .program import CALL, SUM, UNARY, MapProgram, Program, SXProgram, offsets


def casadi_message(err: Exception) -> str:
    """The informative last line of a casadi RuntimeError."""
    lines = [ln.strip() for ln in str(err).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else str(err)


def make_function(name, ins, outs, opts=None, names=None) -> "ca.Function":
    """``Function(name, ins, outs, opts)`` (``names``: ``(names_in, names_out)``) with
    free symbols reported as a ModelError."""
    opts = {"allow_free": True, **(opts or {})}
    try:
        fn = ca.Function(name, ins, outs, *(names or ()), opts)
    except RuntimeError as e:
        raise ModelError(f"casadi could not build {name!r}: {casadi_message(e)}") from None
    if fn.has_free():
        free = fn.free_sx() if fn.is_a("SXFunction") else fn.free_mx()
        names = ", ".join(str(s) for s in free)
        raise ModelError(f"the expressions depend on symbols that are neither in 'x' nor in "
                         f"'p': [{names}] are free")
    return fn


def expand(fn) -> "ca.Function":
    """casadi's ``expand()`` (MX -> SX) with failures as UnsupportedOpError."""
    if fn.is_a("SXFunction"):
        return fn
    try:
        return fn.expand()
    except RuntimeError as e:
        raise UnsupportedOpError(
            f"casadi Function {fn.name()!r} ({fn.class_name()}) cannot be expanded to SX: "
            f"{casadi_message(e)}") from None


class Compiler:
    """Compiles casadi Functions to programs, caching one program per Function (final).

    ``keep_calls=False`` expands every MX graph whole (casadi's own behaviour,
    N copies of a mapped body); the default keeps call and map structure.
    """

    def __init__(self, keep_calls: bool = True, opaque=None):
        self.keep_calls = keep_calls
        #: the :class:`~.opaque.OpaqueRegistry` that the calls of Functions without an
        #: SX program go to; None: such Functions are refused (UnsupportedOpError)
        self.opaque = opaque
        self._cache: dict[int, tuple] = {}
        self._active: set[int] = set()
        self._maps_inside: dict[int, bool] = {}
        #: hashes of the Functions called in a deep chain (opaque calls) and of those
        #: whose body holds such a chain (split at their calls)
        self._chained: set[int] = set()
        self._path_counts: dict = {}         # call_path_counts' memo
        self._keep: list = []  # Functions whose hash is a key above stay alive
        #: (name, class, instances) of every Function compiled as a call target
        self.stats = {"functions": 0, "maps": []}
        #: the NLP's own MX Function and its :func:`~.chains.instruction_ids`, once
        #: :meth:`compile_mx` has compiled it (``top_level``); the reader scans them
        self.top_level: tuple | None = None

    def compile(self, fn) -> Program:
        key = hash(fn)  # casadi hashes a Function by its internal pointer
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1]
        if key in self._active:
            # expand() kept fn as an opaque SX call node (interpolants, integrators,
            # Callbacks, external code): no scalar program to read; its calls are
            # evaluated through casadi (.opaque)
            return self._opaque_program(fn)
        self._active.add(key)
        try:
            prog = self._compile(fn)
        finally:
            self._active.discard(key)
        self._cache[key] = (fn, prog)  # keep fn alive so the pointer is not reused
        self.stats["functions"] += 1
        return prog

    def _opaque_program(self, fn) -> Program:
        if self.opaque is None:
            raise UnsupportedOpError(
                f"casadi Function {fn.name()!r} ({fn.class_name()}) cannot be lowered to "
                "SX: casadi can only call it as a black box")
        return self.opaque.program(fn)

    def _compile(self, fn) -> Program:
        if hash(fn) in self._chained:
            return self._opaque_program(fn)
        if fn.is_a("SXFunction"):
            return SXProgram(fn, self)
        if fn.is_a("Map", True) and self.keep_calls:
            prog = MapProgram(fn, self)
            self.stats["maps"].append((fn.name(), prog.N))
            return prog
        if fn.is_a("MXFunction"):
            if not self.keep_calls:
                return SXProgram(expand(fn), self)
            ins = fn.mx_in()
            # always_inline: this Function's body, its own calls kept as calls
            outs = fn.call(ins, True, False)
            return self.compile_mx(fn.name(), ins, outs)
        # Interpolants, external code, ...: whatever casadi can evaluate on SX
        ins = fn.mx_in()
        try:
            wrapper = ca.Function(fn.name() + "_wrap", ins, fn.call(ins))
        except RuntimeError as e:
            raise UnsupportedOpError(f"casadi Function {fn.name()!r} ({fn.class_name()}) "
                                     f"cannot be called symbolically: {casadi_message(e)}"
                                     ) from None
        try:
            sx = expand(wrapper)
        except UnsupportedOpError:
            if self.opaque is None:
                raise
            return self._opaque_program(fn)
        return SXProgram(sx, self)

    def _splits(self, fn) -> bool:
        """Whether a call of ``fn`` is kept as a call: it runs a Map, it is called in a
        deep chain, or its body holds such a chain."""
        return hash(fn) in self._chained or self._has_map(fn) or self._has_chain(fn)

    def _find_chains(self, fn) -> None:
        """Record the Functions ``fn`` (an MXFunction) calls in a deep chain, nested
        calls included (only with a registry for opaque calls)."""
        if self.opaque is None:
            return
        for f in chained_functions(fn, memo=self._path_counts):
            self._chained.add(hash(f))
            self._keep.append(f)

    def _has_chain(self, fn) -> bool:
        """Whether a call of ``fn`` runs a Function recorded as chained (the memo of
        call_path_counts keeps ``fn`` alive, so its hash stays its own)."""
        if not self._chained:
            return False
        return any(h in self._chained for h in call_path_counts(fn, self._path_counts))

    def _has_map(self, fn) -> bool:
        """Whether calling ``fn`` runs a Map (itself, or inside an MX body)."""
        key = hash(fn)
        hit = self._maps_inside.get(key)
        if hit is None:
            if fn.is_a("Map", True):
                hit = True
            elif fn.is_a("MXFunction"):
                self._maps_inside[key] = False  # guards against recursion
                hit = any(self._has_map(c.which_function()) for c in call_nodes(fn))
            else:
                hit = False
            self._maps_inside[key] = hit
            self._keep.append(fn)
        return hit

    def compile_mx(self, name, ins, outs, inline_wrappers: bool = False,
                   top_level: bool = False) -> Program:
        """A program for MX expressions ``outs`` of MX inputs ``ins``.

        ``inline_wrappers``: first inline the MX Functions called at the top level
        that merely reach a Map (casadi's ``thread`` maps and maps with reduced
        inputs/outputs are such wrappers), so the Map calls themselves are split
        off here and :meth:`MXCallProgram.run_blocks` can see their arguments
        and results.  ``top_level``: the NLP itself, whose chains are always searched
        (a called Function's body only above :data:`CHAIN_UNIT_MAX_INPUTS` inputs)."""
        if inline_wrappers and self.keep_calls:
            outs = self._inline_wrappers(name, ins, outs)
        fn = make_function(name, ins, outs)
        ids = instruction_ids(fn)
        if top_level:
            self.top_level = (fn, ids)
        if self.keep_calls:
            # only calls that reach a Map or a deep chain are worth keeping (module
            # doc): any other call is cheaper to let expand() inline than to replay
            all_calls = call_nodes(fn, ids)
            if all_calls and (top_level or sum(fn.nnz_in(i) for i in range(fn.n_in()))
                              > CHAIN_UNIT_MAX_INPUTS):
                self._find_chains(fn)
            calls = [c for c in all_calls if self._splits(c.which_function())]
            if calls:
                n_maps = len(self.stats["maps"])
                prog = MXCallProgram(name, ins, outs, calls, self)
                if prog.outer is not None:
                    return prog
                del self.stats["maps"][n_maps:]  # compiled but not used
                warnings.warn(f"caspar: casadi ordered {name!r} unexpectedly; expanding it "
                              "whole (correct, but mapped Functions are not reused)",
                              stacklevel=2)
        return SXProgram(expand(fn), self)


    def _inline_wrappers(self, name, ins, outs, depth: int = 4) -> list:
        for _ in range(depth):
            fn = make_function(name, ins, outs)
            wrappers = [c for c in call_nodes(fn)
                        if c.which_function().is_a("MXFunction")
                        and not c.which_function().is_a("Map", True)
                        and self._has_map(c.which_function())]
            if not wrappers:
                break
            olds, news = [], []
            for c in wrappers:
                f = c.which_function()
                args = [_conform(c.dep(i), f.sparsity_in(i), f.name()) for i in range(f.n_in())]
                res = f.call(args, True, False)  # its body, its own calls kept
                for i in range(f.n_out()):
                    olds.append(c.get_output(i))
                    news.append(res[i])
            outs = ca.graph_substitute(list(outs), olds, news)
        return list(outs)


class MXCallProgram(Program):
    """An MX graph split at its call nodes: one outer SX program plus the calls'
    programs, run in a checked schedule (final; see the module docstring).

    ``outer`` is None when the schedule check failed (the caller then expands).
    """

    def __init__(self, name, ins, outs, calls, compiler):
        self.name = name
        self.n_in = [int(e.nnz()) for e in ins]
        self.n_out = [int(e.nnz()) for e in outs]
        olds, ys, args, sites = [], [], [], []
        for j, c in enumerate(calls):
            f = c.which_function()
            for i in range(f.n_out()):
                olds.append(c.get_output(i))
                ys.append(ca.MX.sym(f"caspar_y{j}_{i}", f.sparsity_out(i)))
            for i in range(f.n_in()):
                args.append(_conform(c.dep(i), f.sparsity_in(i), f.name()))
            sites.append((f, f.n_in(), sum(f.nnz_out(i) for i in range(f.n_out()))))
        subst = ca.graph_substitute(args + list(outs), olds, ys)
        # one input holding every Y and one output holding every A (their nonzeros
        # concatenated in order): casadi warns past 10^4 inputs/outputs, and an
        # MX graph with 10^4 call sites would have that many
        a_all = ca.veccat(*subst[:len(args)]) if args else ca.MX(0, 1)
        y_all = ca.veccat(*ys) if ys else ca.MX(0, 1)
        outer = make_function(name + "_outer", list(ins) + [y_all],
                              [a_all] + subst[len(args):])
        if any(compiler._has_map(c.which_function()) for c in call_nodes(outer)):
            self.outer = None  # a map call escaped substitution: let the caller expand
            return
        self.outer = SXProgram(expand(outer), compiler)
        self.progs = [compiler.compile(f) for f, _, _ in sites]
        self.opaque = self.outer.opaque or any(p.opaque for p in self.progs)
        self._schedule(sites, args)

    def _schedule(self, sites, args) -> None:
        outer = self.outer
        n_orig = sum(self.n_in)
        # SSA layout of the outer inputs: originals, then Y_1..Y_K
        y_start = offsets([n for _, _, n in sites])
        y_lo = [n_orig + s for s in y_start]
        n_y = y_start[-1]
        # outer outputs: A_1..A_K, then the original outputs
        a_sizes = [int(a.nnz()) for a in args]
        a_off = offsets(a_sizes)
        # position just after the step that writes each SSA value
        after: dict[int, int] = {}
        for k, (op, _a, b, t) in enumerate(outer.steps):
            for v in range(t, t + (outer.calls[op][2] if b == CALL else 1)):
                after[v] = k + 1
        pos_of_call: list[int] = []
        plan = []
        k_arg = 0
        for j, (f, n_args, n_res) in enumerate(sites):
            ssa = outer.out_ssa[a_off[k_arg]:a_off[k_arg + n_args]]
            k_arg += n_args
            pos = 0
            for v in ssa:
                if v >= outer.first_step_ssa:
                    pos = max(pos, after[v])
                elif n_orig <= v < n_orig + n_y:  # another call's result
                    i = bisect_right(y_lo, v) - 1
                    if i >= j:  # not topological: give up on the split
                        self.outer = None
                        return
                    pos = max(pos, pos_of_call[i])
            pos_of_call.append(pos)
            plan.append((pos, j, ssa, y_lo[j], n_res))
        # each Y_j must be filled before its first reader
        first_read = [len(outer.steps)] * len(sites)
        hi = n_orig + n_y
        for k, (op, a, b, _t) in enumerate(outer.steps):
            if b >= 0:
                reads = (a, b)
            elif b == UNARY:
                reads = (a,)
            elif b == SUM:
                reads = [i if i >= 0 else ~i for i in a]
            else:
                reads = outer.calls[op][1]
            for v in reads:
                if n_orig <= v < hi:
                    j = bisect_right(y_lo, v) - 1
                    if k < first_read[j]:
                        first_read[j] = k
        if any(pos_of_call[j] > first_read[j] for j in range(len(sites))):
            self.outer = None
            return
        plan.sort(key=lambda t: (t[0], t[1]))
        self.plan = plan
        self.n_y = n_y
        self.first_out = a_off[-1]
        self.final = outer.out_ssa[a_off[-1]:]

    def run(self, g, inputs: list) -> list:
        outer = self.outer
        v = outer.start(g, list(inputs) + [None] * self.n_y)
        builders = T.bind(g)
        lo = 0
        for pos, j, ssa, y0, n_res in self.plan:
            outer.execute(g, v, lo, pos, builders)
            lo = pos
            res = self.progs[j].run(g, [v[s] for s in ssa])
            v[y0:y0 + n_res] = res
        outer.execute(g, v, lo, len(outer.steps), builders)
        return [v[s] for s in self.final]

    def run_blocks(self, g, inputs: list, n_x: int) -> tuple[list, list]:
        """``(outputs, blocks)``: like :meth:`run`, but the instances of map call
        sites that :mod:`.mapblocks` can take as tables come back as
        :class:`~caspar_backend.blocks.TemplateBlock` s (their ``rows``: positions in
        ``outputs``) and enter ``outputs`` as 0 (their results and the squares of
        them that the blocks hold).  For the top-level program, whose inputs are
        ``n_x`` variables followed by the parameters."""
        from .mapblocks import MapSite, analyse, make_blocks, use_lists

        outer = self.outer
        n_p = sum(self.n_in) - n_x
        candidates = {}
        for _pos, j, ssa, y0, _n in self.plan:
            prog = self.progs[j]
            if isinstance(prog, MapProgram) and not prog.opaque:
                # (opaque calls are registered on the model's graph, not a template)
                candidates[j] = MapSite(prog, ssa, y0)
        sites = {}
        if candidates:
            uses = use_lists(outer, [int(y) for site in candidates.values()
                                     for y in site.y_ssa.ravel()])
            for j, site in candidates.items():
                an = analyse(site, outer, n_x, n_p, uses, self.first_out)
                if an.blocked.any():
                    sites[j] = (site, an)
        self.block_stats = []
        if not sites:
            return self.run(g, inputs), []
        v = outer.start(g, list(inputs) + [None] * self.n_y)
        builders = T.bind(g)
        zero = g.const(0.0)
        # the squares the blocks hold: the flat run sets each to 0 once computed
        squares = {w for _site, an in sites.values() for w in an.squares}
        cuts = [k for k, step in enumerate(outer.steps) if step[3] in squares] \
            if squares else []

        def execute(lo, hi):
            for k in cuts[bisect_right(cuts, lo - 1):bisect_right(cuts, hi - 1)]:
                outer.execute(g, v, lo, k + 1, builders)
                v[outer.steps[k][3]] = zero
                lo = k + 1
            outer.execute(g, v, lo, hi, builders)

        blocks = []
        lo = 0
        for pos, j, ssa, y0, n_res in self.plan:
            execute(lo, pos)
            lo = pos
            hit = sites.get(j)
            if hit is None:
                v[y0:y0 + n_res] = self.progs[j].run(g, [v[s] for s in ssa])
                continue
            site, an = hit
            v[y0:y0 + n_res] = [zero] * n_res
            replay = np.flatnonzero(~an.blocked)
            if replay.size:
                batch = [[v[s] for s in col] for col in site.arg_ssa[:, replay].T.tolist()]
                res = site.prog.inner.run_many(g, batch)
                for col, r in zip(site.y_ssa[:, replay].T.tolist(), res):
                    for s, node in zip(col, r):
                        v[s] = node
            blocks += make_blocks(site, outer, n_x, an, self.first_out)
            self.block_stats.append((site.prog.name, int(an.blocked.sum()), int(replay.size)))
        execute(lo, len(outer.steps))
        return [v[s] for s in self.final], blocks


def _conform(arg, sp, fname):
    """A call argument with exactly the callee's input sparsity."""
    if arg.sparsity() == sp:
        return arg
    if arg.size1() == sp.size1() and arg.size2() == sp.size2():
        return ca.project(arg, sp)
    raise ModelError(f"argument of shape {arg.size1()}x{arg.size2()} passed to casadi "
                     f"Function {fname!r} expecting {sp.size1()}x{sp.size2()}")
