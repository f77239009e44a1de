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

Compiled calls (``flag``): CPython runs a Python signal handler only in the main thread,
between bytecodes, so while the main thread is inside a compiled call that releases the
GIL and runs no Python (the compiled interior point, :mod:`caspar_backend.compiled.solve`)
the handler above waits for the call's end.  For such a call the caller passes ``flag``,
memory the call reads once per iteration, and the first SIGINT also sets ``flag[0] = 1``
at once: during the block, CPython's C-level handler writes the signal number to a pipe
(``signal.set_wakeup_fd``, which it does for every signal with a Python handler), and a
daemon thread blocked on the pipe's other end sets the flag.  Cost per block: two
``set_wakeup_fd`` calls and a lock, a few microseconds; none when no flag is passed.  No
wakeup fd is taken from another owner (asyncio's, say): with one in place, or off POSIX,
the flag is not set and the compiled call answers at its end.  A byte read late -- the
SIGINT came while the main thread held the GIL at the block's edge -- can set the flag of
the *next* such block; its caller tells that by ``shared.interrupted`` staying False.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

# the handlers are read and set through signal's C functions: the module's wrappers
# convert every handler to and from its Handlers enum, at the price of a caught
# exception per call for a Python handler (~4 of them per block, a batch's or a single
# solve's fixed cost); a raw handler is the object installed, compared by identity here
import _signal


@contextlib.contextmanager
def sigint_as_stop(shared, flag=None):
    """Within the block, the first SIGINT sets ``shared.interrupted`` (and, given
    ``flag``, ``flag[0] = 1`` at once, module docstring) and the second raises
    KeyboardInterrupt; the previous handler is back afterwards.

    Nested blocks (a batch's block over all its stages, and the compiled kernel's and
    single solves' blocks inside it) share the outermost block's handler: a SIGINT sets
    ``interrupted`` on every block in flight, and a block entered after it -- a stage
    that had not started when the request came -- starts interrupted (its flag set), so
    the request ends the whole batch at the next iteration wherever between stages it
    arrived."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _signal.getsignal(signal.SIGINT)
    nested = handler is _request_stop
    if not nested and handler is not signal.default_int_handler:
        yield                   # the application's own handler: its business
        return
    if nested and any(s.interrupted for s in _listeners):
        shared.interrupted = True
        if flag is not None:
            flag[0] = 1
    _listeners.append(shared)
    previous = None if nested else _signal.signal(signal.SIGINT, _request_stop)
    try:
        if flag is not None:
            _watch(flag)
        yield
    finally:
        if flag is not None:
            _unwatch(flag)
        if not nested:
            # (signal.signal runs the pending Python handlers first: ``interrupted`` is
            # up to date when the block ends)
            _signal.signal(signal.SIGINT, previous)
        _remove(_listeners, shared)


#: the ``shared`` objects of the blocks in flight in the main thread, outermost first
_listeners: list = []


def _request_stop(signum, frame):
    """The handler of the outermost block: the first SIGINT marks every block in flight,
    a second one raises KeyboardInterrupt."""
    if any(s.interrupted for s in _listeners):
        raise KeyboardInterrupt
    for s in _listeners:
        s.interrupted = True


_lock = threading.Lock()
_pipe = None            # (read fd, write fd) of the wakeup pipe, made on first use
_flags: list = []       # the flags of the blocks in flight; the wakeup fd ours while any


def _watch(flag) -> None:
    """Point the wakeup fd at the pipe (the first block with a flag) and the watcher at
    ``flag`` too; nothing off POSIX, where another owner's wakeup fd is in place, or
    where the pipe cannot be made."""
    if os.name != "posix":
        return
    with _lock:
        first = not _flags
        _flags.append(flag)
    if not first:
        return
    try:
        ours = _wakeup_fd()
        old = signal.set_wakeup_fd(ours)
    except (OSError, ValueError):       # no fd left; not the main interpreter
        _unflag(flag)
        return
    if old not in (-1, ours):           # (ours: left by a block a KeyboardInterrupt cut)
        _restore(old)
        _unflag(flag)


def _unwatch(flag) -> None:
    """``flag`` unwatched; after the last one, the wakeup fd back to none unless it is
    another owner's."""
    if os.name != "posix" or not _unflag(flag):
        return
    fd = signal.set_wakeup_fd(-1)
    if fd != -1 and (_pipe is None or fd != _pipe[1]):
        _restore(fd)


def _restore(fd: int) -> None:
    # another owner's fd back in place; its warn_on_full_buffer cannot be read, so it
    # comes back False (asyncio's choice; True would only add warnings)
    signal.set_wakeup_fd(fd, warn_on_full_buffer=False)


def _unflag(flag) -> bool:
    """``flag`` off the watched list (by identity: flags are arrays); True when the list
    is empty afterwards."""
    with _lock:
        _remove(_flags, flag)
        return not _flags


def _remove(items: list, item) -> None:
    for k in range(len(items) - 1, -1, -1):
        if items[k] is item:
            del items[k]
            return


def _wakeup_fd() -> int:
    """The pipe's write end (non-blocking, as set_wakeup_fd requires); the first call
    makes the pipe and starts the watcher thread."""
    global _pipe
    with _lock:
        if _pipe is None:
            r, w = os.pipe()
            os.set_blocking(w, False)
            _pipe = (r, w)
            threading.Thread(target=_watcher, args=(r,), name="caspar-sigint",
                             daemon=True).start()
        return _pipe[1]


def _watcher(r: int) -> None:
    """The pipe's reader: a SIGINT among the bytes sets the flags of the blocks in flight."""
    while True:
        try:
            data = os.read(r, 64)
        except OSError:         # closed (after a fork, in the child)
            return
        if not data:
            return
        if int(signal.SIGINT) in data:
            with _lock:
                for flag in _flags:
                    flag[0] = 1


def _after_fork_in_child() -> None:
    # the child has no watcher thread and must not share the parent's pipe: it makes its
    # own on first use
    global _pipe, _lock
    _lock = threading.Lock()
    if _pipe is not None:
        for fd in _pipe:
            try:
                os.close(fd)
            except OSError:
                pass
    _pipe = None
    _flags.clear()
    _listeners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
