"""Ctrl-C through casadi's call machinery.

A KeyboardInterrupt raised in Python code that casadi called (a ``casadi.Callback``'s
``eval``, its sparsity queries at construction) does not reach the caller as itself:
casadi's C++ layer catches it and raises a RuntimeError whose message ends in
``KeyboardInterrupt``.  Where caspar calls casadi for its own solver (building the
nlpsol Function, calling it numerically), :func:`keyboard_interrupts` turns such an
error back into the KeyboardInterrupt the user pressed -- what IPOPT's nlpsol raises
when Ctrl-C lands before its first iteration.  (A casadi Function of the user's that
calls the solver is casadi's business: it raises casadi's RuntimeError, as for any
Callback.)
"""

from __future__ import annotations

import contextlib


def is_interrupt(exc: BaseException) -> bool:
    """A KeyboardInterrupt, raised here or inside a casadi Callback (which casadi turns
    into a RuntimeError whose message ends in 'KeyboardInterrupt')."""
    return isinstance(exc, KeyboardInterrupt) or (
        isinstance(exc, RuntimeError) and str(exc).rstrip().endswith("KeyboardInterrupt"))


@contextlib.contextmanager
def keyboard_interrupts():
    """Within the block, casadi's RuntimeError for a KeyboardInterrupt is re-raised as
    KeyboardInterrupt; every other error is left as it is."""
    try:
        yield
    except RuntimeError as exc:
        if is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise
