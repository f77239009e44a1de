"""Running one function in several threads at once for the concurrency tests."""

from __future__ import annotations

import threading


def results_in_threads(fn, n: int) -> list:
    """``[fn(0), ..., fn(n - 1)]``, each call in a thread of its own, all started before
    any is joined; the first exception a call raised is raised here."""
    out, errors = [None] * n, []

    def work(k):
        try:
            out[k] = fn(k)
        except BaseException as e:       # noqa: BLE001 - raised below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out
