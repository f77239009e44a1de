"""Read an AMPL ``.nl`` file (text format) into an :class:`~caspar_backend.model.NLPModel`.

The format (D. M. Gay, "Writing .nl Files", 2005) as AMPL and Pyomo's NL writer emit it:

* a header of ten lines: ``g`` (text; ``b`` binary is refused), then the counts --
  line 2 ``n_var n_con n_obj n_ranges n_eqns [n_lcons]``, line 3 the nonlinear
  constraints and objectives and the complementarity counts, line 7 the discrete
  variables, line 10 the common expressions;
* segments, each a letter and its numbers on one line, then its lines:
  ``F`` imported function, ``S`` suffix, ``V`` defined variable (a common expression:
  a linear part and an expression; referenced as ``v<j>`` with ``j >= n_var``),
  ``C`` / ``O`` the nonlinear part of a constraint / objective (``O<i> <sense>``,
  sense 1 = maximize), ``L`` logical constraint, ``d`` / ``x`` initial duals /
  primals (``<k>`` then ``i value`` lines), ``r`` constraint sides and ``b`` variable
  bounds (one line each: ``0 lo hi``, ``1 hi``, ``2 lo``, ``3`` free, ``4 value``,
  ``5`` complementarity), ``k`` Jacobian column counts, ``J`` / ``G`` the linear
  part of a constraint / objective (``<i> <k>`` then ``j coefficient`` lines);
* expressions in prefix form, one token per line: ``o<op>`` an operator
  (:data:`OPCODES`; the n-ary ones followed by a line with their count), ``n<x>``
  a number, ``s<i>`` / ``l<i>`` an integer, ``v<j>`` a variable, ``f<i> <k>`` a call
  of an imported function, ``h<len>:<text>`` a string.  Text after ``#`` is a comment.

A constraint's body is its ``C`` expression plus its ``J`` part; the objective is the
first one's ``O`` expression plus its ``G`` part (IPOPT's AMPL driver solves objective
0 too), in minimization form ``-F`` for a maximization (``sense = -1``, as the other
front-ends).  What caspar cannot solve is refused with a :class:`ModelError` naming it:
binary files, complementarity and logical constraints, imported functions, string
and symbolic operators, and discrete variables (caspar solves continuous NLPs; IPOPT's
driver would relax them silently).

Row and column names come from ``stub.row`` / ``stub.col`` where the writer left them
(Pyomo with ``symbolic_solver_labels``), for the log and error messages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..expr import Graph
from ..model import NLPModel

#: AMPL operator code -> (caspar op, arity); arity -1: n-ary (a count line follows)
OPCODES = {
    0: ("add", 2), 1: ("sub", 2), 2: ("mul", 2), 3: ("div", 2), 5: ("pow", 2),
    6: ("less", 2),                 # max(a - b, 0)
    11: ("fmin", -1), 12: ("fmax", -1), 13: ("floor", 1), 14: ("ceil", 1),
    15: ("abs", 1), 16: ("neg", 1), 20: ("or", 2), 21: ("and", 2), 22: ("lt", 2),
    23: ("le", 2), 24: ("eq", 2), 28: ("ge", 2), 29: ("gt", 2), 30: ("ne", 2),
    34: ("not", 1), 35: ("if_else", 3), 37: ("tanh", 1), 38: ("tan", 1),
    39: ("sqrt", 1), 40: ("sinh", 1), 41: ("sin", 1), 42: ("log10", 1), 43: ("log", 1),
    44: ("exp", 1), 45: ("cosh", 1), 46: ("cos", 1), 47: ("atanh", 1), 48: ("atan2", 2),
    49: ("atan", 1), 50: ("asinh", 1), 51: ("asin", 1), 52: ("acosh", 1), 53: ("acos", 1),
    54: ("sum", -1), 76: ("pow", 2), 77: ("square", 1), 78: ("pow", 2),
}
#: AMPL operators caspar refuses, by name (the rest of AMPL's table is unknown here)
UNSUPPORTED = {4: "mod", 55: "div (integer)", 56: "precision", 57: "round", 58: "trunc",
               59: "count", 60: "numberof", 61: "numberofs", 62: "atleast", 63: "atmost",
               64: "plterm", 65: "if (symbolic)", 66: "exactly", 67: "not atleast",
               68: "not atmost", 69: "not exactly", 70: "forall", 71: "exists",
               72: "==> (implies)", 73: "<==> (iff)", 74: "alldiff", 75: "!alldiff"}


@dataclass(frozen=True)
class NLFile:
    """Final.  An NL file read: the model and what the ``.sol`` file needs."""

    model: NLPModel
    n_var: int
    n_con: int
    n_obj: int
    sense: int          # -1: the objective is maximized
    duals0: np.ndarray | None   # the d segment's initial duals (AMPL's sign), or None


def _names(stub: str, ext: str, count: int):
    path = stub + ext
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        names = [line.rstrip("\n") for line in f]
    return names[:count] if len(names) >= count else None


class _Lines:
    """The file's lines, comments cut (a string constant keeps its text), read
    forward."""

    def __init__(self, text: str, path: str):
        self.lines = text.split("\n")
        self.pos = 0
        self.path = path

    def next(self) -> str:
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            self.pos += 1
            if not line.startswith("h"):
                line = line.split("#", 1)[0]
            line = line.strip()
            if line:
                return line
        raise ModelError(f"{self.path}: the NL file ends early (line {self.pos})")

    def more(self) -> bool:
        while self.pos < len(self.lines):
            if self.lines[self.pos].split("#", 1)[0].strip():
                return True
            self.pos += 1
        return False

    def ints(self) -> list:
        return [int(t) for t in self.next().split()]


class _Reader:
    """Final.  One NL file into one expression graph."""

    def __init__(self, path: str):
        self.path = path
        with open(path) as f:
            text = f.read()
        self.src = _Lines(text, path)
        self._header()
        self.g = Graph()
        self.defined = {}              # defined variable index -> node
        self.funcs = {}                # imported function index -> name
        self.c_expr = [None] * self.n_con
        self.o_expr = [None] * self.n_obj
        self.o_sense = [0] * self.n_obj
        self.c_lin = [None] * self.n_con
        self.o_lin = [None] * self.n_obj
        self.x0 = np.zeros(self.n_var)
        self.duals0 = None
        self.lbx = np.full(self.n_var, -np.inf)
        self.ubx = np.full(self.n_var, np.inf)
        self.lbg = np.full(self.n_con, -np.inf)
        self.ubg = np.full(self.n_con, np.inf)

    # ------------------------------------------------------------ header
    def _header(self) -> None:
        first = self.src.next()
        if not first.startswith("g"):
            raise ModelError(f"{self.path}: only text NL files can be read (the file "
                             f"starts with {first[:1]!r}; AMPL writes text with "
                             f"'option auxfiles ...; write g...' or the -og flag)")
        counts = [self.src.ints() for _ in range(9)]
        self.n_var, self.n_con, self.n_obj = counts[0][:3]
        if len(counts[1]) > 2 and any(counts[1][2:]):
            raise ModelError(f"{self.path}: complementarity constraints are not supported")
        if len(counts[0]) > 5 and counts[0][5]:
            raise ModelError(f"{self.path}: logical constraints are not supported")
        if any(counts[5]):
            raise ModelError(f"{self.path}: {sum(counts[5])} discrete (binary or integer) "
                             f"variables: caspar solves continuous NLPs")

    # ------------------------------------------------------------ expressions
    def _leaf(self, tok: str):
        kind = tok[0]
        if kind == "n":
            return self.g.const(float(tok[1:]))
        if kind in "sl":
            return self.g.const(float(int(tok[1:])))
        if kind == "v":
            j = int(tok[1:])
            if j < self.n_var:
                return self.g.var(j)
            if j not in self.defined:
                raise ModelError(f"{self.path}: defined variable v{j} used before "
                                 "its V segment")
            return self.defined[j]
        if kind == "f":
            i = int(tok[1:].split()[0])
            raise ModelError(f"{self.path}: the imported function "
                             f"{self.funcs.get(i, i)!r} (an AMPL external function) "
                             "is not supported")
        if kind == "h":
            raise ModelError(f"{self.path}: string expressions are not supported")
        raise ModelError(f"{self.path}: unknown expression line {tok!r} "
                         f"(line {self.src.pos})")

    def _apply(self, op: str, args: list):
        g = self.g
        if op == "less":
            return g.apply("fmax", g.sub(args[0], args[1]), g.const(0.0))
        if op == "square":
            return g.powi(args[0], 2)
        if op in ("fmin", "fmax"):
            node = args[0]
            for a in args[1:]:
                node = g.apply(op, node, a)
            return node
        if op == "sum":
            return g.sum(args) if args else g.const(0.0)
        return g.apply(op, *args)

    def expression(self):
        """The expression starting at the next line (iteratively: no recursion depth
        limit on long chains of binary operators)."""
        stack = []                      # [op, arity, args]
        while True:
            tok = self.src.next()
            if tok[0] == "o":
                code = int(tok[1:])
                if code not in OPCODES:
                    name = UNSUPPORTED.get(code, f"operator o{code}")
                    raise ModelError(f"{self.path}: the AMPL operator {name!r} is not "
                                     "supported")
                op, arity = OPCODES[code]
                if arity < 0:
                    arity = int(self.src.next())
                stack.append([op, arity, []])
                if arity > 0:
                    continue
                node = self._apply(op, [])
                stack.pop()
            else:
                node = self._leaf(tok)
            while stack:
                top = stack[-1]
                top[2].append(node)
                if len(top[2]) < top[1]:
                    break
                stack.pop()
                node = self._apply(top[0], top[2])
            else:
                return node

    def _linear(self, count: int):
        """``count`` lines ``j coefficient``: (indices, coefficients)."""
        idx = np.empty(count, dtype=np.int64)
        coef = np.empty(count)
        for k in range(count):
            a, b = self.src.next().split()
            idx[k], coef[k] = int(a), float(b)
        return idx, coef

    def _lincomb(self, lin):
        idx, coef = lin
        if len(idx) == 0:
            return None
        return self.g.lincomb(coef.tolist(), [self._leaf(f"v{j}") for j in idx.tolist()])

    # ------------------------------------------------------------ segments
    def _sides(self, lo: np.ndarray, hi: np.ndarray, what: str) -> None:
        for i in range(len(lo)):
            parts = self.src.next().split()
            kind = int(parts[0])
            vals = [float(v) for v in parts[1:]]
            if kind == 0:
                lo[i], hi[i] = vals[0], vals[1]
            elif kind == 1:
                hi[i] = vals[0]
            elif kind == 2:
                lo[i] = vals[0]
            elif kind == 4:
                lo[i] = hi[i] = vals[0]
            elif kind == 5:
                raise ModelError(f"{self.path}: {what} {i} is a complementarity "
                                 "condition (not supported)")
            elif kind != 3:
                raise ModelError(f"{self.path}: unknown {what} kind {kind}")

    def read(self) -> NLFile:
        src = self.src
        while src.more():
            line = src.next()
            seg, rest = line[0], line[1:].split()
            if seg == "F":
                self.funcs[int(rest[0])] = rest[3] if len(rest) > 3 else rest[-1]
            elif seg == "S":
                for _ in range(int(rest[1])):
                    src.next()
            elif seg == "V":
                j, k = int(rest[0]), int(rest[1])
                lin = self._linear(k)
                node = self.expression()
                extra = self._lincomb(lin)
                self.defined[j] = node if extra is None else self.g.add(node, extra)
            elif seg == "C":
                self.c_expr[int(rest[0])] = self.expression()
            elif seg == "O":
                i = int(rest[0])
                self.o_sense[i] = int(rest[1])
                self.o_expr[i] = self.expression()
            elif seg == "L":
                raise ModelError(f"{self.path}: logical constraints are not supported")
            elif seg == "d":
                self.duals0 = np.zeros(self.n_con)
                for _ in range(int(rest[0])):
                    i, v = src.next().split()
                    self.duals0[int(i)] = float(v)
            elif seg == "x":
                for _ in range(int(rest[0])):
                    i, v = src.next().split()
                    self.x0[int(i)] = float(v)
            elif seg == "r":
                self._sides(self.lbg, self.ubg, "constraint")
            elif seg == "b":
                self._sides(self.lbx, self.ubx, "variable")
            elif seg == "k":
                for _ in range(int(rest[0])):
                    src.next()
            elif seg == "J":
                self.c_lin[int(rest[0])] = self._linear(int(rest[1]))
            elif seg == "G":
                self.o_lin[int(rest[0])] = self._linear(int(rest[1]))
            else:
                raise ModelError(f"{self.path}: unknown segment {line!r} "
                                 f"(line {src.pos})")
        return self._model()

    def _body(self, expr, lin):
        parts = [p for p in (expr, None if lin is None else self._lincomb(lin))
                 if p is not None]
        if not parts:
            return self.g.const(0.0)
        return parts[0] if len(parts) == 1 else self.g.add(parts[0], parts[1])

    def _model(self) -> NLFile:
        g = self.g
        cons = [self._body(self.c_expr[i], self.c_lin[i]) for i in range(self.n_con)]
        sense = 1
        if self.n_obj:
            f = self._body(self.o_expr[0], self.o_lin[0])
            if self.o_sense[0] == 1:
                sense, f = -1, g.neg(f)
        else:
            f = g.const(0.0)
        stub = self.path[:-3] if self.path.endswith(".nl") else self.path
        model = NLPModel(g, f, cons, self.lbx, self.ubx, self.lbg, self.ubg,
                         x0=self.x0.copy(), var_names=_names(stub, ".col", self.n_var),
                         con_names=_names(stub, ".row", self.n_con), sense=sense,
                         source="nl")
        return NLFile(model, self.n_var, self.n_con, self.n_obj, sense, self.duals0)


def read_nl(path: str) -> NLFile:
    """The model of the text NL file ``path`` (module doc)."""
    return _Reader(path).read()
