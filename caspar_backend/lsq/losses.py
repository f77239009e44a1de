"""Robust loss functions with Ceres' semantics, and Triggs' correction.

A loss ``rho`` acts on the squared norm ``s = |r_b|^2`` of each residual block b, and the
cost is ``1/2 sum_b rho(s_b)``.  With scale ``a`` (``b = a^2``):

================  =====================================  ===========================
loss              rho(s)                                 Ceres
================  =====================================  ===========================
:class:`Huber`    s  (s <= b);  2 a sqrt(s) - b  (s > b) ``HuberLoss(a)``
:class:`SoftL1`   2 b (sqrt(1 + s/b) - 1)                ``SoftLOneLoss(a)``
:class:`Cauchy`   b log(1 + s/b)                         ``CauchyLoss(a)``
================  =====================================  ===========================

``LossFunction.rho(s)`` returns ``(rho, rho', rho'')`` as three arrays of the shape of
``s``; rho' is clamped below by the smallest positive double, as Ceres does, so that a
block far in the tails keeps a (tiny) positive weight.

**Correction** (Triggs et al., "Bundle adjustment -- a modern synthesis", sec. 4.3;
Ceres' ``Corrector``).  The minimizer works on corrected residuals and Jacobians whose
Gauss-Newton model has the robust cost's gradient and a curvature that stays positive
semi-definite:

    sqrt_rho1 = sqrt(rho'(s))
    if s == 0 or rho''(s) <= 0:   r~ = sqrt_rho1 r,      J~ = sqrt_rho1 J
    else:  alpha = 1 - sqrt(1 + 2 s rho''/rho'),
           r~ = sqrt_rho1 / (1 - alpha) r,
           J~ = sqrt_rho1 (I - alpha r r^T / s) J

(Ceres applies the rank-one term only where rho'' > 0, i.e. inside the convex region;
in the outlier region the plain re-weighting converges faster.)  For the three losses
here rho'' <= 0 everywhere, so the correction is the re-weighting; the rank-one branch
serves user losses with ``positive_curvature = True``, and needs every row of a block to
share the block's Jacobian pattern (checked when the minimizer starts).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..errors import ModelError

_TINY = np.finfo(float).tiny


def array_module(a):
    """NumPy for host arrays and scalars, CuPy for CuPy arrays: the losses and the
    correction run where the residuals are (a GPU solve keeps them on the device)."""
    if type(a).__module__.split(".")[0] != "cupy":
        return np
    import cupy

    return cupy


class LossFunction(ABC):
    """Abstract loss ``rho(s)`` of a block's squared norm (implementations final)."""

    #: True when rho'' may be positive (then the rank-one correction applies)
    positive_curvature = False
    #: True when :meth:`rho` works on CuPy arrays as on NumPy's (this module's losses);
    #: on CuPy residuals the correction evaluates other losses on the host
    array_generic = False

    def __init__(self, scale: float = 1.0):
        scale = float(scale)
        if not np.isfinite(scale) or scale <= 0:
            raise ModelError(f"{type(self).__name__}: scale must be a positive number, got "
                             f"{scale!r}")
        self.a = scale
        self.b = scale * scale

    @abstractmethod
    def rho(self, s):
        """``(rho(s), rho'(s), rho''(s))`` for an array ``s >= 0``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.a!r})"


class Huber(LossFunction):
    """Ceres' ``HuberLoss(a)``: quadratic up to |r| = a, linear beyond."""

    array_generic = True

    def rho(self, s):
        xp = array_module(s)
        s = xp.asarray(s, dtype=float)
        out = s > self.b
        r = xp.sqrt(xp.where(out, s, 1.0))
        rho0 = xp.where(out, 2.0 * self.a * r - self.b, s)
        rho1 = xp.where(out, xp.maximum(_TINY, self.a / r), 1.0)
        rho2 = xp.where(out, -rho1 / (2.0 * xp.where(out, s, 1.0)), 0.0)
        return rho0, rho1, rho2


class SoftL1(LossFunction):
    """Ceres' ``SoftLOneLoss(a)``: ``2 b (sqrt(1 + s/b) - 1)``."""

    array_generic = True

    def rho(self, s):
        xp = array_module(s)
        s = xp.asarray(s, dtype=float)
        c = 1.0 / self.b
        total = 1.0 + s * c
        tmp = xp.sqrt(total)
        rho1 = xp.maximum(_TINY, 1.0 / tmp)
        # 2b (sqrt(1 + x) - 1) written as 2b x / (sqrt(1 + x) + 1): no cancellation at small s
        return 2.0 * s / (tmp + 1.0), rho1, -(c * rho1) / (2.0 * total)


class Cauchy(LossFunction):
    """Ceres' ``CauchyLoss(a)``: ``b log(1 + s/b)``."""

    array_generic = True

    def rho(self, s):
        xp = array_module(s)
        s = xp.asarray(s, dtype=float)
        c = 1.0 / self.b
        total = 1.0 + s * c
        inv = 1.0 / total
        return self.b * xp.log1p(s * c), xp.maximum(_TINY, inv), -c * inv * inv


#: Ceres' LossFunctionType names
LOSSES = {"HUBER": Huber, "SOFT_L1": SoftL1, "CAUCHY": Cauchy}


def as_loss(loss) -> LossFunction | None:
    """``loss`` as a LossFunction or None (trivial): a LossFunction, None, 'TRIVIAL',
    or a name of :data:`LOSSES` (scale 1)."""
    if loss is None or isinstance(loss, LossFunction):
        return loss
    if isinstance(loss, str):
        key = loss.upper()
        if key == "TRIVIAL":
            return None
        if key in LOSSES:
            return LOSSES[key]()
        raise ModelError(f"unknown loss {loss!r}; expected TRIVIAL, {', '.join(LOSSES)} or a "
                         "LossFunction")
    raise ModelError(f"loss must be a LossFunction, a name or None, got {type(loss).__name__}")


class Corrector:
    """The correction of one evaluation (final): built from the residuals, applied to
    residuals and Jacobian values.

    ``block`` int64 (m,): residual block of each row; ``rows`` int64 (nnz,): row of
    each Jacobian entry, ``cols`` its column (for the rank-one term)."""

    def __init__(self, loss: LossFunction, r, block, n_blocks: int):
        self.xp = xp = array_module(r)
        self.block = block
        s = xp.bincount(block, weights=r * r, minlength=n_blocks)
        if xp is np or loss.array_generic:
            rho0, rho1, rho2 = loss.rho(s)
        else:
            rho0, rho1, rho2 = (xp.asarray(v, dtype=float) for v in loss.rho(s.get()))
        self.cost = 0.5 * float(xp.sum(rho0))
        sqrt_rho1 = xp.sqrt(rho1)
        full = (s > 0) & (rho2 > 0)
        if bool(xp.any(full)):
            d = 1.0 + 2.0 * xp.where(full, s * rho2 / rho1, 0.0)
            alpha = xp.where(full, 1.0 - xp.sqrt(xp.maximum(d, 0.0)), 0.0)
            scaling = sqrt_rho1 / (1.0 - alpha)
            self.alpha_sq_norm = xp.where(full, alpha / xp.where(full, s, 1.0), 0.0)
        else:
            scaling, self.alpha_sq_norm = sqrt_rho1, None
        self.sqrt_rho1 = sqrt_rho1
        self.row_scaling = scaling[block]
        self.r = r

    def residuals(self, r):
        """Corrected residuals ``r~`` (a new array)."""
        return r * self.row_scaling

    def jacobian(self, vals, rows, cols, n_cols: int, pairs=None):
        """Corrected Jacobian values (a new array) of the COO ``(rows, cols)``;
        ``pairs``: :func:`block_column_pairs` of this pattern (computed here when None)."""
        out = vals * self.sqrt_rho1[self.block[rows]]
        if self.alpha_sq_norm is not None:
            # J~_rc -= sqrt_rho1 alpha/s r_r sum_{r' in block} r_r' J_r'c ; the per-(block,
            # column) sums come from one bincount over the entries
            blk = self.block[rows]
            inv = block_column_pairs(self.block, rows, cols, n_cols) if pairs is None else pairs
            colsum = self.xp.bincount(inv, weights=self.r[rows] * vals)
            a = (self.sqrt_rho1 * self.alpha_sq_norm)[blk]
            out -= a * self.r[rows] * colsum[inv]
        return out


def block_column_pairs(block, rows, cols, n_cols: int):
    """int64 (nnz,): for each Jacobian entry, the rank of its (residual block, column)
    pair among the pattern's distinct pairs -- what the rank-one correction sums over.
    A property of the pattern alone: a solve computes it once."""
    xp = array_module(block)
    key = block[rows] * n_cols + cols
    return xp.unique(key, return_inverse=True)[1].reshape(-1)
