"""Ctrl-C during a solve ends it with IPOPT's ``User_Requested_Stop``.

Rule: while a solve runs in the main thread with Python's default SIGINT handler in place
(``signal.default_int_handler``, which raises KeyboardInterrupt), :func:`sigint_as_stop`
replaces it by one that only records the request in ``Shared.interrupted``.  The
interior-point loop reads that flag once per iteration, after the iterate's errors are
logged and before the convergence test (where IPOPT calls its intermediate callback,
whose ``false`` is the same stop), and ends the solve there: the iteration in progress
finishes, so the iterate returned, its function values, multipliers and statistics are
those of one consistent point -- nothing is torn inside an evaluation, a factorization or
a step.

Why a flag and not a caught KeyboardInterrupt: the exception can be raised between any
two bytecodes, e.g. after ``w`` moved and before ``y`` did.  A second SIGINT still raises
KeyboardInterrupt at once (the escape from an iteration that does not end, e.g. a long
factorization); the driver catches it and returns the iterate as it stands, also as
User_Requested_Stop.  Elsewhere the handler is left alone: other threads never receive
SIGINT, and a handler the application installed is its own business.
"""

from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def sigint_as_stop(shared):
    """Within the block, the first SIGINT sets ``shared.interrupted`` and the second
    raises KeyboardInterrupt; the previous handler is back afterwards."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return

    def request_stop(signum, frame):
        if shared.interrupted:
            raise KeyboardInterrupt
        shared.interrupted = True

    previous = signal.signal(signal.SIGINT, request_stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
