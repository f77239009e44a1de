"""Exceptions raised by caspar.

Every error a user can cause derives from :class:`CasparError`, so callers can
catch one type.  Messages name the offending model component or expression in
readable form (see :func:`caspar_backend.expr.to_str`).
"""

from __future__ import annotations


def num(v) -> str:
    """A number in a message as a user writes it ('0.6', 'nan', 'inf'): the repr of
    the Python float, never numpy's ``np.float64(0.6)``."""
    return repr(float(v))


class CasparError(Exception):
    """Base class of every error caspar raises on purpose."""


class ModelError(CasparError, ValueError):
    """The model is not a continuous NLP caspar can accept (bad bounds, integer
    variables, shape mismatches, several objectives, ...)."""


class UnsupportedOpError(ModelError):
    """An expression uses an operation caspar does not implement."""


class NonFiniteError(ModelError):
    """A NaN or infinity where a finite number is required (constants, x0,
    parameters)."""


class IndexOutOfRangeError(ModelError, IndexError):
    """A variable or parameter index outside the model's range."""


class OptionError(CasparError, KeyError):
    """An unknown solver option or an option value of the wrong type."""

    def __str__(self) -> str:  # KeyError quotes its message; we do not want that
        return str(self.args[0]) if self.args else ""


class EvaluationError(CasparError, ArithmeticError):
    """A function evaluation produced NaN/Inf where the solver cannot recover."""


class DeviceError(CasparError, RuntimeError):
    """A requested device (GPU) or its libraries are not usable."""
