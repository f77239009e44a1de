"""A service request's future: :class:`concurrent.futures.Future`'s API, answered with its
batch, its waiting clients woken one after another.

Why not a plain ``Future``: under many client threads the service's own cost per
request is not its arithmetic but its thread hand-offs.  A ``Future`` builds a
``threading.Condition`` (Python code) per request, and its ``result()`` waits on another
lock made per wait; answering a batch of b requests with ``set_result`` wakes its b
waiting clients at once, and b threads woken together fight over the GIL (each woken
thread that waits more than the switch interval forces the running one off -- the
"convoy" that made 64 clients' p99 several times their p50).  Here:

* state: a request is PENDING, RUNNING once its batch starts, then FINISHED (result or
  exception), or CANCELLED while still queued (CANCELLED_AND_NOTIFIED once the worker
  has seen it): ``Future``'s states and rules, each change under the future's own lock
  ``_lk`` (a bare lock: nothing done under it takes it again);
* waiting: the future holds a *gate*, a lock taken at creation and released once, when
  the future is done; a waiter takes the gate (with its timeout) and puts it back for
  the next waiter of the same future;
* waking a batch (:func:`settle`): every future of the batch is made FINISHED first,
  then the gates are opened in order up to the :data:`LEAD`-th one a thread is blocked
  on; a waiter that leaves opens the next gates, up to and including the next one a
  thread is blocked on (:class:`_Chain`).  So at any time about :data:`LEAD` woken
  clients want the GIL, and the clients of a batch run one after another, as the GIL
  makes them run anyway, without the fight.  A gate nobody waits on is opened in
  passing; every gate is opened, since the chain stops only at a future whose waiter
  will go on (a waiter that leaves -- answered, timed out, interrupted -- after its
  future is done always calls the chain);
* compatibility: ``concurrent.futures.wait``/``as_completed`` (and asyncio's
  ``wrap_future``) read ``_state``, ``_condition`` and ``_waiters`` under
  ``_condition``: those two are made on first use, the condition over ``_lk``, so that a
  state change and its notification stay one atomic step for them; callbacks run as
  ``Future``'s do (after the change, outside the lock, errors logged).
"""

from __future__ import annotations

import threading
from _thread import allocate_lock
from concurrent.futures import CancelledError, Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures._base import (CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED, LOGGER,
                                      PENDING, RUNNING)

#: states in which a future is over (a waiter returns at once)
_OVER = (CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED)
#: blocked waiters an answered batch wakes first; each waiter that leaves wakes one more,
#: so about this many woken clients want the GIL at once.  One is the least GIL traffic,
#: but a woken client that waits for a core (the kernel threads keep them busy) then
#: holds up the rest of its batch; two measured as fast without the stubbed kernel and
#: with a lower p99 with it (2-core VM, 64 clients: docs/batch.md)
LEAD = 2


class Answer(Future):
    """Final.  The future of one service request (module doc): a
    :class:`concurrent.futures.Future` whose waiters are woken by its batch's chain."""

    def __init__(self):      # (no Future.__init__: its Condition is what is saved)
        self._state = PENDING
        self._result = None
        self._exception = None
        self._done_callbacks = []
        self._lk = allocate_lock()
        self._gate = allocate_lock()
        self._gate.acquire()
        self._blocked = 0        # threads blocked on the gate now
        self._chain = None       # the batch's _Chain, set with FINISHED

    # -- made on first use (concurrent.futures.wait / as_completed, repr) --------------
    @property
    def _condition(self) -> threading.Condition:
        d = self.__dict__
        c = d.get("_cond")
        return c if c is not None else d.setdefault("_cond", threading.Condition(self._lk))

    @property
    def _waiters(self) -> list:
        d = self.__dict__
        w = d.get("_wl")
        return w if w is not None else d.setdefault("_wl", [])

    def _notify_locked(self, how: str | None) -> None:
        """With ``_lk`` held: tell ``wait``/``as_completed`` waiters (``how``: their
        method, None for none) and wake ``_condition``'s waiters, if any were made."""
        d = self.__dict__
        if how is not None and d.get("_wl"):
            for w in d["_wl"]:
                getattr(w, how)(self)
        c = d.get("_cond")
        if c is not None:
            c.notify_all()

    # -- state -------------------------------------------------------------------------
    def cancelled(self) -> bool:
        return self._state in (CANCELLED, CANCELLED_AND_NOTIFIED)

    def running(self) -> bool:
        return self._state == RUNNING

    def done(self) -> bool:
        return self._state in _OVER

    def cancel(self) -> bool:
        """Cancel if not yet in a batch (True, also when already cancelled); False once
        running or done."""
        with self._lk:
            if self._state in (RUNNING, FINISHED):
                return False
            if self._state in (CANCELLED, CANCELLED_AND_NOTIFIED):
                return True
            self._state = CANCELLED
            self._notify_locked(None)
        self._gate.release()       # its waiters raise CancelledError
        self._invoke_callbacks()
        return True

    def set_running_or_notify_cancel(self) -> bool:
        with self._lk:
            if self._state == CANCELLED:
                self._state = CANCELLED_AND_NOTIFIED
                self._notify_locked("add_cancelled")
                return False
            if self._state == PENDING:
                self._state = RUNNING
                return True
            LOGGER.critical("Future %s in unexpected state: %s", id(self), self._state)
            raise RuntimeError("Future in unexpected state")

    def _finish(self, result, exception, chain) -> None:
        """Make the future FINISHED (raises InvalidStateError if it is over); its gate
        stays shut: the caller opens it, or ``chain`` does."""
        with self._lk:
            state = self._state
            if state not in _OVER:
                self._result, self._exception, self._chain = result, exception, chain
                self._state = FINISHED
                self._notify_locked("add_result" if exception is None else "add_exception")
                return
        raise InvalidStateError(f"{state}: {self!r}")     # (repr takes _lk)

    def set_result(self, result) -> None:
        self._finish(result, None, None)
        self._gate.release()
        self._invoke_callbacks()

    def set_exception(self, exception) -> None:
        self._finish(None, exception, None)
        self._gate.release()
        self._invoke_callbacks()

    def add_done_callback(self, fn) -> None:
        with self._lk:
            if self._state not in _OVER:
                self._done_callbacks.append(fn)
                return
        try:
            fn(self)
        except Exception:
            LOGGER.exception("exception calling callback for %r", self)

    # -- waiting -----------------------------------------------------------------------
    def _wait(self, timeout) -> None:
        """Block until the future is over or ``timeout`` seconds (None: no limit; <= 0:
        no wait, as ``Future``'s) have passed; then, if it is done by its batch, wake the
        next waiters of the batch (module doc)."""
        gate = self._gate
        with self._lk:
            self._blocked += 1
        try:
            if timeout is None:
                got = gate.acquire()
            else:
                got = gate.acquire(timeout > 0, timeout if timeout > 0 else -1)
            if got:
                gate.release()     # open for this future's other waiters
        finally:
            with self._lk:
                self._blocked -= 1
            chain = self._chain
            if chain is not None:
                chain.wake()

    def result(self, timeout=None):
        if self._state not in _OVER:
            self._wait(timeout)
        state = self._state
        if state == FINISHED:
            if self._exception is not None:
                try:
                    raise self._exception
                finally:
                    self = None        # (as Future's: no frame <-> exception cycle)
            return self._result
        if state in (CANCELLED, CANCELLED_AND_NOTIFIED):
            raise CancelledError()
        raise FutureTimeout()

    def exception(self, timeout=None):
        if self._state not in _OVER:
            self._wait(timeout)
        state = self._state
        if state == FINISHED:
            return self._exception
        if state in (CANCELLED, CANCELLED_AND_NOTIFIED):
            raise CancelledError()
        raise FutureTimeout()


class _Chain:
    """Final.  The gates of one answered batch, opened in order: :meth:`wake` opens the
    next gates up to and including a blocked one (each such thread calls :meth:`wake`
    again when it leaves its wait), or all that are left; once all are open it lets go
    of the answers."""

    __slots__ = ("answers", "next", "lock")

    def __init__(self, answers: list):
        self.answers = answers
        self.next = 0
        self.lock = allocate_lock()

    def wake(self, blocked: int = 1) -> None:
        """Open the next gates, up to and including the ``blocked``-th one a thread is
        blocked on (or all that are left)."""
        with self.lock:
            answers, i = self.answers, self.next
            n = len(answers)
            while i < n:
                a = answers[i]
                i += 1
                a._gate.release()
                # (a waiter counted here leaves later and calls wake; one not counted yet
                # finds its gate open: at worst a thread is woken early, never missed)
                if a._blocked:
                    blocked -= 1
                    if not blocked:
                        break
            self.next = i
            if i == n:
                self.answers = ()     # (answer -> chain -> answers: no cycle left to the GC)


def settle(answers: list, results=None, exception=None) -> None:
    """Answer a batch: ``answers[i]`` (RUNNING futures) gets ``results[i]``, or every one
    ``exception``; all are FINISHED before the first waiter is woken; then the done
    callbacks run, in order."""
    chain = _Chain(answers)
    if results is None:
        for a in answers:
            a._finish(None, exception, chain)
    else:
        for a, r in zip(answers, results, strict=True):
            a._finish(r, None, chain)
    chain.wake(LEAD)
    for a in answers:
        if a._done_callbacks:
            a._invoke_callbacks()
