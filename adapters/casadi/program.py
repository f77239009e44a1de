"""Replayable programs: a casadi Function compiled once, run on caspar nodes.

A :class:`Program` maps the flat input nonzeros of a casadi Function (all
inputs concatenated, each column-major over its sparsity) to its flat output
nonzeros, on :class:`~caspar_backend.expr.Node` s of a graph:

    outputs = program.run(g, inputs)           # lists of Node

Compiling reads casadi's instruction program once; running only builds nodes.
That is what makes ``F.map(N)`` cheap: the inner ``F`` is compiled once and
:class:`MapProgram` replays it N times with each instance's inputs, so the N
instances come out structurally identical (one pattern group) without casadi
expanding N copies.

:class:`SXProgram` is the workhorse.  CasADi's SX virtual machine reuses work
slots (``w[o] = op(w[i1], w[i2])`` with ``o`` overwritten later); compiling
renames every slot write to a fresh *SSA index*, so the compiled program is a
straight-line single-assignment list over a value list

    v[0 : n_in]              the inputs
    v[n_in : n_in + n_const]  the constants
    v[...]                    one value per step result

and a run is ``v[t] = builder[op](v[a], v[b])`` per step.  Chains of
single-use additions become one n-ary ``sum`` step (:func:`_fuse_sums`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import partial
from itertools import accumulate

from caspar_backend.errors import ModelError

from . import optable as T

_CONST = T.CODES["OP_CONST"]
_PARAMETER = T.CODES["OP_PARAMETER"]
_ADD = T.CODES["OP_ADD"]
_SUB = T.CODES["OP_SUB"]

# step encodings: (op, a, b, t) writes v[t]; b >= 0 binary op(v[a], v[b]),
# b == UNARY op(v[a]), b == SUM sum of the terms a, b == CALL call number op
UNARY = -1
CALL = -2
SUM = -3


def _reader(fn, method):
    """``fn.<method>`` as a fast callable of the instruction index.

    The SWIG proxy method adds a Python frame per call that costs more than the
    C++ call itself; the raw ``casadi._casadi.Function_<method>`` skips it.
    Falls back to the proxy where that private name does not exist.
    """
    import casadi

    raw = getattr(getattr(casadi, "_casadi", None), "Function_" + method, None)
    return partial(raw, fn) if raw is not None else getattr(fn, method)


def offsets(sizes) -> list[int]:
    """``[0, s0, s0+s1, ...]``."""
    return [0, *accumulate(sizes)]


class Program(ABC):
    """A compiled casadi Function (abstract; implementations are final).

    ``n_in``/``n_out``: nonzero counts per input/output; ``name``: the
    Function's name for messages.
    """

    name: str
    n_in: list
    n_out: list
    #: whether running it registers opaque calls (:mod:`.opaque`): such a program must
    #: run on the model's own graph, never on a template's
    opaque: bool = False

    @abstractmethod
    def run(self, g, inputs: list) -> list:
        """Output nonzeros (flat list of nodes) for flat input nonzeros ``inputs``."""

    def run_many(self, g, batch: list) -> list:
        """``[run(g, inputs) for inputs in batch]`` (implementations may share setup)."""
        return [self.run(g, args) for args in batch]


class SXProgram(Program):
    """An SXFunction's instruction program in single-assignment form (final).

    ``calls`` holds ``(program, dep_ssa, n_res)`` per casadi call node inside the
    SX graph (``Function`` called with ``never_inline`` or an SX function that
    embeds one); its results take ``n_res`` consecutive SSA indices.
    """

    def __init__(self, fn, compiler):
        self.name = fn.name()
        self.n_in = [fn.nnz_in(i) for i in range(fn.n_in())]
        self.n_out = [fn.nnz_out(i) for i in range(fn.n_out())]
        self._compile(fn, compiler)

    # ------------------------------------------------------------- compiling
    def _compile(self, fn, compiler) -> None:
        rng = range(fn.n_instructions())
        ids = list(map(_reader(fn, "instruction_id"), rng))
        # inputs and outputs are read lazily, as the loop consumes them: held as lists
        # they cost two small Python lists per instruction at once (~1.8 GB at 8 * 10^6
        # instructions, the single-sum chained Rosenbrock at N = 10^6)
        ins = map(_reader(fn, "instruction_input"), rng)
        outs = map(_reader(fn, "instruction_output"), rng)
        in_off = offsets(self.n_in)
        out_off = offsets(self.n_out)
        n_in = in_off[-1]
        n_const = ids.count(_CONST)
        consts: list[float] = []
        steps: list[tuple] = []
        calls: list[tuple] = []
        out_ssa = [-1] * out_off[-1]
        # slot -> SSA index of the value the slot holds now
        S: list[int] = [-1] * max(fn.sz_w(), 1)
        nxt = n_in + n_const
        ci = n_in
        call_exprs = None
        # everything the loop touches is a local: ~10^6 iterations
        kind = T.KIND + [T.K_REFUSED] * 1024  # pads codes from newer casadi versions
        K_BIN, K_UN, K_IN, K_OUT = T.K_BINARY, T.K_UNARY, T.K_INPUT, T.K_OUTPUT
        K_CONST, K_ALIAS, K_CALL = T.K_CONST, T.K_ALIAS, T.K_CALL
        step = steps.append
        for k, (op, i, o) in enumerate(zip(ids, ins, outs)):
            kd = kind[op]
            if kd == K_BIN:
                step((op, S[i[0]], S[i[1]]))
                S[o[0]] = nxt
                nxt += 1
            elif kd == K_UN:
                step((op, S[i[0]], UNARY))
                S[o[0]] = nxt
                nxt += 1
            elif kd == K_IN:
                S[o[0]] = in_off[i[0]] + i[1]
            elif kd == K_OUT:
                out_ssa[out_off[o[0]] + o[1]] = S[i[0]]
            elif kd == K_CONST:
                consts.append(fn.instruction_constant(k))
                S[o[0]] = ci
                ci += 1
            elif kd == K_ALIAS:
                S[o[0]] = S[i[0]]
            elif kd == K_CALL:
                if call_exprs is None:
                    call_exprs = fn.instructions_sx()
                prog = compiler.compile(call_exprs[k].which_function())
                calls.append((prog, [S[d] for d in i], len(o)))
                step((len(calls) - 1, -1, CALL))
                for j, r in enumerate(o):
                    if r >= 0:
                        S[r] = nxt + j
                nxt += len(o)
            else:
                raise self._refusal(fn, k, op)
        if -1 in out_ssa:
            raise ModelError(f"casadi Function {self.name!r}: output nonzero "
                             f"{out_ssa.index(-1)} is never written")
        self.consts = consts
        self.calls = calls
        self.opaque = any(c[0].opaque for c in calls)
        self.out_ssa = out_ssa
        self.n_ssa = nxt
        self.first_step_ssa = n_in + n_const
        self.steps = _fuse_sums(steps, calls, out_ssa, n_in + n_const, nxt)

    def _refusal(self, fn, k, op) -> Exception:
        try:  # name the offending expression; only on the error path
            expr = str(fn.instructions_sx()[k])
            if op == _PARAMETER:
                expr = ", ".join(str(s) for s in fn.free_sx()) or expr
        except Exception:  # noqa: BLE001 - best effort for the message only
            expr = ""
        return T.refuse(op, f"casadi Function {self.name!r}", expr[:200])

    def n_instructions(self) -> int:
        return len(self.steps)

    # --------------------------------------------------------------- running
    def start(self, g, inputs) -> list:
        """The value list before the first step: inputs, constants, then a slot
        per SSA value the steps write."""
        n_in = self.first_step_ssa - len(self.consts)
        if len(inputs) != n_in:
            raise ModelError(f"casadi Function {self.name!r} takes {n_in} input nonzeros, "
                             f"got {len(inputs)}")
        v = list(inputs)
        if self.consts:
            const = g.const
            v.extend([const(c) for c in self.consts])
        v.extend([None] * (self.n_ssa - self.first_step_ssa))
        return v

    def execute(self, g, v: list, lo: int, hi: int, builders=None) -> None:
        """Run steps ``lo:hi`` on the value list ``v`` (from :meth:`start`)."""
        _execute(g, self.steps[lo:hi], self.calls, v, builders or T.bind(g))

    def run(self, g, inputs: list) -> list:
        v = self.start(g, inputs)
        _execute(g, self.steps, self.calls, v, T.bind(g))
        return [v[i] for i in self.out_ssa]

    def run_many(self, g, batch: list) -> list:
        builders = T.bind(g)
        steps, calls, out_ssa = self.steps, self.calls, self.out_ssa
        result = []
        for inputs in batch:
            v = self.start(g, inputs)
            _execute(g, steps, calls, v, builders)
            result.append([v[i] for i in out_ssa])
        return result


def _execute(g, steps, calls, v, builders) -> None:
    """The interpreter loop: ``v[t] = builder(v[a], v[b])`` per step (hot path)."""
    un, bi = builders
    gsum, neg = g.sum, g.neg
    for op, a, b, t in steps:
        if b >= 0:
            v[t] = bi[op](v[a], v[b])
        elif b == UNARY:
            v[t] = un[op](v[a])
        elif b == SUM:
            v[t] = gsum([v[i] if i >= 0 else neg(v[~i]) for i in a])
        else:
            prog, deps, n_res = calls[op]
            v[t:t + n_res] = prog.run(g, [v[d] for d in deps])


def _fuse_sums(steps, calls, out_ssa, first, n_ssa) -> list:
    """Give every step its target SSA index ``(op, a, b, t)`` and fuse chains of
    single-use ``+``/``-`` into one n-ary ``sum`` step.

    casadi has only binary addition, so ``sum1``, ``sumsqr``, ``dot`` and
    ``mtimes`` arrive as chains ``((t0 + t1) + t2) + ...``.  A chain link used
    once (by the next link) is never needed on its own, so the chain becomes
    ``sum(t0, t1, t2, ...)``: no intermediate nodes, and caspar splits an
    objective ``sum`` into its terms for grouping.  A sum step's ``a`` is the
    tuple of its terms, ``~i`` standing for ``-v[i]``.
    """
    uses = [0] * n_ssa
    for op, a, b in steps:
        if b >= 0:
            uses[a] += 1
            uses[b] += 1
        elif b == UNARY:
            uses[a] += 1
        else:
            for d in calls[op][1]:
                uses[d] += 1
    for i in out_ssa:
        uses[i] += 1
    terms: dict[int, list] = {}   # chain value -> its terms, while unconsumed
    out: list = []
    t = first
    for op, a, b in steps:
        if b >= 0 and (op == _ADD or op == _SUB):
            la = terms.pop(a) if uses[a] == 1 and a in terms else [a]
            lb = terms.pop(b) if uses[b] == 1 and b in terms else [b]
            la.extend(lb if op == _ADD else [~i for i in lb])
            terms[t] = la
            out.append((op, a, b, t))
            t += 1
        elif b == CALL:
            out.append((op, a, b, t))
            t += calls[op][2]
        else:
            out.append((op, a, b, t))
            t += 1
    # emit: consumed links vanish, chain heads of 3+ terms become sums
    final = []
    for step in out:
        op, a, b, t = step
        if b >= 0 and (op == _ADD or op == _SUB):
            lst = terms.get(t)
            if lst is None:
                continue  # consumed by the next link
            if len(lst) > 2:
                step = (op, tuple(lst), SUM, t)
        final.append(step)
    return final


class MapProgram(Program):
    """``F.map(N)``: the inner program replayed once per instance (final).

    Input ``i`` of the map holds N copies of inner input ``i`` side by side
    (columns), so with column-major nonzeros instance ``k`` owns the contiguous
    block ``[k * nnz_i, (k+1) * nnz_i)``; outputs are laid out the same way.
    """

    def __init__(self, fn, compiler):
        self.name = fn.name()
        inner = fn.get_function(fn.get_function()[0])
        self.inner = compiler.compile(inner)
        self.opaque = self.inner.opaque
        self.n_in = [fn.nnz_in(i) for i in range(fn.n_in())]
        self.n_out = [fn.nnz_out(i) for i in range(fn.n_out())]
        self.N = _map_count(fn, inner)
        self.inner_in = list(self.inner.n_in)
        self.inner_out = list(self.inner.n_out)
        if ([c * self.N for c in self.inner_in] != self.n_in
                or [c * self.N for c in self.inner_out] != self.n_out):
            raise ModelError(f"casadi map {self.name!r}: input/output sizes are not "
                             f"{self.N} copies of {inner.name()!r}")

    def run(self, g, inputs: list) -> list:
        N = self.N
        in_off = offsets(self.n_in)
        batch = []
        for k in range(N):
            args = []
            for i, c in enumerate(self.inner_in):
                s = in_off[i] + k * c
                args.extend(inputs[s:s + c])
            batch.append(args)
        results = self.inner.run_many(g, batch)
        out = []
        o_off = offsets(self.inner_out)
        for j, c in enumerate(self.inner_out):
            lo, hi = o_off[j], o_off[j] + c
            for r in results:
                out.extend(r[lo:hi])
        return out


def _map_count(fn, inner) -> int:
    """N of a Map: its column count over the inner function's, checked on all
    inputs and outputs that have columns."""
    ratios = set()
    for i in range(fn.n_in()):
        if inner.size2_in(i):
            ratios.add(fn.size2_in(i) // inner.size2_in(i))
    for i in range(fn.n_out()):
        if inner.size2_out(i):
            ratios.add(fn.size2_out(i) // inner.size2_out(i))
    if len(ratios) != 1:
        raise ModelError(f"cannot tell the instance count of casadi map {fn.name()!r}")
    return ratios.pop()
