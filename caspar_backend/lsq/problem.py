"""Nonlinear least squares as a problem kind of its own.

    min_x  F(x) = 1/2 sum_b rho( |r_b(x; p)|^2 )      s.t.  lbx <= x <= ubx

``r(x; p)`` is a residual vector of length m, compiled by caspar's compiler exactly as
the constraint functions g(x; p) of an NLP are (the residual rows *are* the constraint
rows of an :class:`~caspar_backend.model.NLPModel` whose objective is 0): the same
pattern groups, the same generated code, the same Jacobian evaluator and COO layout.
``b`` runs over *residual blocks* (Ceres' residual blocks: the rows a loss function
sees together, e.g. the two rows of one reprojection error); ``rho`` is the identity
when no loss is given (Ceres' TRIVIAL loss, cost ``1/2 |r|^2``), else a robust loss of
:mod:`caspar_backend.lsq.losses`.

Three ways in:

* :meth:`LeastSquaresProblem.from_blocks`: vector templates with instance tables
  (:class:`ResidualBlock`, the pre-grouped input of :mod:`caspar_backend.blocks` with a
  k-vector template): N instances write rows ``offset + k*i + c``, c = 0..k-1, and
  each instance is one residual block;
* :meth:`LeastSquaresProblem.from_expressions`: a flat list of residual expressions of
  one :class:`~caspar_backend.expr.Graph` (grouped by structural hashing);
* ``LeastSquaresProblem(model)``: an NLPModel whose constraint rows are the residuals
  (what the CasADi front door builds).

Variables with ``lbx == ubx`` are held constant (Ceres' ``SetParameterBlockConstant``):
their Jacobian columns are left out of every linear system.  Other finite bounds are
enforced by projecting each step onto the box (Ceres' ``Plus`` with bounds).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import IndexOutOfRangeError, ModelError
from ..expr import Graph, Node
from .pattern import ReducedPattern


@dataclass(eq=False)
class ResidualBlock:
    """N instances of a k-vector residual template (final).

    Instance i evaluates ``residuals[c](x[var_table[:, i]], p[param_table[:, i]],
    data_table[:, i])`` for c = 0..k-1 into row ``offset + k*i + c`` of r, where
    ``offset`` is the number of rows of the blocks before it.  ``residuals`` are nodes of
    ``graph`` whose leaves are ``var(j)`` (slot j of ``var_table``, int64 (s, N)),
    ``param(j)`` (``param_table``, int64 (q, N)) and ``data(j)`` (``data_table``, float64
    (d, N)).  One instance is one residual block of the loss function.
    ``checked_indices``: see :attr:`~caspar_backend.blocks.TemplateBlock.checked_indices`
    (for front ends that built the tables from indices they checked)."""

    graph: Graph
    residuals: list
    var_table: np.ndarray
    param_table: np.ndarray | None = None
    data_table: np.ndarray | None = None
    name: str = "residual"
    checked_indices: bool = False

    def __post_init__(self):
        if isinstance(self.residuals, Node):
            self.residuals = [self.residuals]
        self.residuals = list(self.residuals)
        if not self.residuals:
            raise ModelError(f"residual block {self.name}: no residual expressions")
        self.var_table = np.ascontiguousarray(self.var_table, dtype=np.int64)
        if self.var_table.ndim != 2:
            raise ModelError(f"residual block {self.name}: var_table must be 2-D (slots x "
                             f"instances), got shape {self.var_table.shape}")
        # converted once here: the k components' template blocks share these very arrays
        # (and so are checked once)
        N = self.var_table.shape[1]
        for name, dtype in (("param_table", np.int64), ("data_table", np.float64)):
            t = getattr(self, name)
            setattr(self, name, np.zeros((0, N), dtype) if t is None else
                    np.ascontiguousarray(t, dtype=dtype))

    @property
    def size(self) -> int:
        """Number of instances N."""
        return self.var_table.shape[1]

    @property
    def dim(self) -> int:
        """Rows per instance k."""
        return len(self.residuals)

    def template_blocks(self, offset: int) -> list:
        """One :class:`~caspar_backend.blocks.TemplateBlock` per component c, writing
        rows ``offset + k*i + c``."""
        from ..blocks import TemplateBlock

        rows0 = offset + self.dim * np.arange(self.size, dtype=np.int64)
        return [TemplateBlock(self.graph, root, self.var_table, self.param_table,
                              self.data_table, rows0 + c, name=f"{self.name}[{c}]",
                              checked_indices=self.checked_indices)
                for c, root in enumerate(self.residuals)]


class IndexedNames:
    """The names ``prefix[0] .. prefix[n-1]`` as a read-only sequence, formatted on
    access (final): a model of 10^5 residuals need not build 10^5 strings that only
    an error message would read."""

    def __init__(self, prefix: str, n: int):
        self.prefix, self.n = prefix, int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.n))]
        i = int(i)
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return f"{self.prefix}[{i % self.n}]"

    def __iter__(self):
        return (f"{self.prefix}[{i}]" for i in range(self.n))


class LeastSquaresProblem:
    """A compiled nonlinear least-squares problem (final).  See the module docstring.

    ``loss``: a :class:`~caspar_backend.lsq.losses.LossFunction` or None (trivial);
    ``residual_block_of_row``: int64 (m,), the residual block of each row (blocks
    numbered 0..B-1); default: each row its own block (``from_blocks``: each instance)."""

    def __init__(self, model, loss=None, residual_block_of_row=None):
        from ..problem import Problem

        t0 = time.perf_counter()
        self.model = model
        self.compiled = Problem(model, hessian=False)
        self.m, self.n = model.m, model.n
        if residual_block_of_row is None:
            residual_block_of_row = np.arange(self.m, dtype=np.int64)
        rb = np.asarray(residual_block_of_row, dtype=np.int64).reshape(-1)
        if rb.size != self.m:
            raise ModelError(f"residual_block_of_row has {rb.size} entries, expected one per "
                             f"residual row ({self.m})")
        if rb.size and rb.min() < 0:
            raise IndexOutOfRangeError("residual_block_of_row has a negative block index")
        self.residual_block_of_row = rb
        self.num_residual_blocks = int(rb.max()) + 1 if rb.size else 0
        from .losses import as_loss

        self.loss = as_loss(loss)
        self.compile_time = time.perf_counter() - t0

    # ------------------------------------------------------------ front doors
    @classmethod
    def from_blocks(cls, n: int, blocks, x0=None, p=None, lbx=None, ubx=None, *,
                    var_names=None, param_names=None, loss=None) -> "LeastSquaresProblem":
        """Residuals given as :class:`ResidualBlock` s (rows in the order of ``blocks``);
        each instance of a block is one residual block of the loss."""
        from ..model import NLPModel

        if isinstance(blocks, ResidualBlock):
            blocks = [blocks]
        tblocks, offset, block_of_row, nb = [], 0, [], 0
        for b in blocks:
            if not isinstance(b, ResidualBlock):
                raise ModelError(f"from_blocks: expected ResidualBlock, got {type(b).__name__}")
            tblocks += b.template_blocks(offset)
            block_of_row.append(nb + np.repeat(np.arange(b.size, dtype=np.int64), b.dim))
            offset += b.size * b.dim
            nb += b.size
        g = Graph()
        lbx = np.full(n, -np.inf) if lbx is None else lbx
        ubx = np.full(n, np.inf) if ubx is None else ubx
        model = NLPModel(g, g.const(0.0), [], lbx, ubx, np.zeros(offset), np.zeros(offset),
                         x0=x0, p=p,
                         var_names=IndexedNames("x", n) if var_names is None else var_names,
                         param_names=(IndexedNames("p", np.size(p)) if param_names is None
                                      and p is not None else param_names),
                         constraint_blocks=tblocks, n_rows=offset, source="least squares",
                         con_names=IndexedNames("r", offset))
        return cls(model, loss=loss, residual_block_of_row=np.concatenate(block_of_row)
                   if block_of_row else np.zeros(0, np.int64))

    @classmethod
    def from_expressions(cls, graph: Graph, residuals, x0=None, p=None, lbx=None, ubx=None,
                         *, residual_block_of_row=None, var_names=None, param_names=None,
                         residual_names=None, loss=None, n=None) -> "LeastSquaresProblem":
        """Residuals as expressions of ``graph`` (``var(i)`` leaves are x_i); ``n``: the
        number of variables (default: the length of ``x0``, ``lbx`` or the largest
        variable index + 1)."""
        from ..expr import topo_order
        from ..model import NLPModel

        residuals = list(residuals)
        m = len(residuals)
        if n is None:
            for v in (x0, lbx, ubx, var_names):
                if v is not None and np.ndim(v) == 1:
                    n = len(v)
                    break
            else:
                idx = [nd.attr for nd in topo_order(residuals) if nd.op == "var"]
                n = max(idx) + 1 if idx else 0
        lbx = np.full(n, -np.inf) if lbx is None else lbx
        ubx = np.full(n, np.inf) if ubx is None else ubx
        model = NLPModel(graph, graph.const(0.0), residuals, lbx, ubx, np.zeros(m), np.zeros(m),
                         x0=x0, p=p, var_names=var_names, param_names=param_names,
                         con_names=residual_names, source="least squares")
        return cls(model, loss=loss, residual_block_of_row=residual_block_of_row)

    # ---------------------------------------------------------------- access
    x0 = property(lambda self: self.model.x0)
    lbx = property(lambda self: self.model.lbx)
    ubx = property(lambda self: self.model.ubx)

    @property
    def p(self) -> np.ndarray:
        return self.model.p

    def __repr__(self) -> str:
        return (f"<caspar LeastSquaresProblem n={self.n} residuals={self.m} "
                f"blocks={self.num_residual_blocks} groups={len(self.compiled.constraint_groups)}>")

    def evaluator(self, device: str = "cpu", p=None):
        """The compiled problem's evaluator: ``cons(x)`` are the residuals r(x; p),
        ``jac_values(x)`` the Jacobian in the COO ``(jac_rows, jac_cols)``."""
        return self.compiled.evaluator(device, p=p)

    def residuals(self, x, p=None) -> np.ndarray:
        """r(x; p), float64 (m,)."""
        return np.asarray(self.evaluator(p=p).cons(np.asarray(x, float)), dtype=float).copy()

    def jacobian(self, x, p=None):
        """dr/dx at x as a ``scipy.sparse.csr_matrix`` (m, n)."""
        return self.evaluator(p=p).jac(np.asarray(x, float))

    def cost(self, x, p=None) -> float:
        """``1/2 sum_b rho(|r_b|^2)`` at x (Ceres' cost)."""
        r = self.residuals(x, p)
        s = np.bincount(self.residual_block_of_row, weights=r * r,
                        minlength=self.num_residual_blocks)
        return 0.5 * float(np.sum(self.loss.rho(s)[0] if self.loss is not None else s))

    def reduced_pattern(self, lbx=None, ubx=None, ev=None) -> ReducedPattern:
        """The Jacobian pattern without the columns of variables with lbx == ubx; ``ev``:
        the evaluator whose COO order the values will come in (default: the CPU's; a
        GPU evaluator's is the same pattern, read back once)."""
        from ..arrays.xp import host

        ev = self.evaluator() if ev is None else ev
        lbx = self.lbx if lbx is None else lbx
        ubx = self.ubx if ubx is None else ubx
        fixed = np.asarray(lbx) == np.asarray(ubx)
        free = np.flatnonzero(~fixed).astype(np.int64)
        newcol = np.full(self.n, -1, dtype=np.int64)
        newcol[free] = np.arange(len(free), dtype=np.int64)
        rows, cols = host(ev.jac_rows), host(ev.jac_cols)
        keep = np.flatnonzero(~fixed[cols]).astype(np.int64)
        return ReducedPattern(rows[keep], newcol[cols[keep]], keep, free, self.m)

    # ---------------------------------------------------------------- solve
    def solve(self, x0=None, p=None, *, lbx=None, ubx=None, options=None, **kw):
        """Minimize with Levenberg-Marquardt (:mod:`caspar_backend.lsq.trust_region`);
        ``options`` / keywords: :class:`~caspar_backend.lsq.options.SolverOptions`.
        Returns a :class:`~caspar_backend.lsq.summary.Summary` (``.x`` the solution)."""
        from .trust_region import minimize

        return minimize(self, x0=x0, p=p, lbx=lbx, ubx=ubx, options=options, **kw)
