"""cuDSS's fill-reducing ordering of a KKT pattern, kept for later analyses of the pattern.

cuDSS's ANALYSIS phase is REORDERING (nested dissection of A's graph, on the host) then
SYMBOLIC_FACTORIZATION.  The reordering depends on A's *pattern* and on the configuration
(nested-dissection levels, pivoting), not on its values, and cuDSS gives back what it
chose and takes it again in place of its own reordering:

=======================================  ==============================================
read after ANALYSIS                      given before a later ANALYSIS
=======================================  ==============================================
``CUDSS_DATA_PERM_REORDER_ROW``: (N,)    ``CUDSS_DATA_USER_PERM``
int32, the elimination order
``CUDSS_DATA_ND_PARTITION_TREE``:        ``CUDSS_DATA_USER_ND_PARTITION_TREE`` (the
(2^levels - 1,) int32, the nested        factorization's parallel schedule; without it
dissection's separator tree              a user permutation factorizes as one sequence)
=======================================  ==============================================

:class:`Ordering` is that pair.  :data:`ORDERINGS` keeps the orderings of the patterns
analysed in this process and, under the cache folder (``$CASPAR_CACHE_DIR/cudss``, one
``.npz`` per pattern), those of earlier processes, keyed by :func:`ordering_key`: the
pattern's bytes, N, the pivoting, the levels and cuDSS's version.  The factors of a
reused ordering are those of a fresh analysis to rounding (two fresh analyses of one
matrix already differ in the last bits; docs/cudss.md).  ``CASPAR_CUDSS_ORDERINGS=1``
turns the store on, ``0`` off (every analysis reorders); the default is :data:`DEFAULT_ON`.

An entry is checked when read (a permutation of 0..N-1, an int32 tree) and written
atomically (:func:`~caspar_backend.cache_dir.write_atomically`): a damaged or foreign
file is ignored, never given to cuDSS.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ordering:
    """Final.  One analysis's ordering (module doc): ``perm`` (N,) int32, a permutation of
    0..N-1; ``tree`` (T,) int32, cuDSS's nested-dissection partition tree (T = 0 when
    the library gave none)."""

    perm: np.ndarray
    tree: np.ndarray

    def valid_for(self, n: int) -> bool:
        """Whether this is an ordering of an N = ``n`` system (checked before cuDSS sees
        it: a wrong one would be read out of bounds)."""
        p = self.perm
        if p.dtype != np.int32 or p.shape != (n,) or self.tree.dtype != np.int32 \
                or self.tree.ndim != 1:
            return False
        if n == 0:
            return True
        if int(p.min()) < 0 or int(p.max()) >= n:
            return False
        return bool((np.bincount(p, minlength=n) == 1).all())


def ordering_key(indptr, indices, n: int, pivoting: bool, levels: int,
                 version: tuple) -> str:
    """The store's key of a pattern (host int32 ``indptr`` (N+1,) and ``indices`` (nnz,),
    one triangle in CSR) under these settings: BLAKE2b of all of them, hex."""
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((int(n), int(indices.size), bool(pivoting), int(levels),
                   tuple(int(v) for v in version))).encode())
    h.update(np.ascontiguousarray(indptr, dtype=np.int32).data)
    h.update(np.ascontiguousarray(indices, dtype=np.int32).data)
    return h.hexdigest()


#: whether the store is on without ``CASPAR_CUDSS_ORDERINGS``: off until a GPU run has
#: checked cuDSS 1.0's use of a given ordering (tests/kkt/test_cudss_ordering.py's GPU
#: test, the AC-OPF's analysis and factorization times: docs/cudss.md)
DEFAULT_ON = False


def enabled() -> bool:
    """``CASPAR_CUDSS_ORDERINGS`` is ``1`` (on) or ``0`` (off); unset: :data:`DEFAULT_ON`."""
    v = os.environ.get("CASPAR_CUDSS_ORDERINGS")
    return DEFAULT_ON if v is None else v != "0"


class OrderingStore:
    """Final.  Orderings by :func:`ordering_key`: the last :attr:`IN_MEMORY` in this
    process, all in the cache folder's ``cudss`` sub-folder.  Thread-safe."""

    #: orderings kept in memory (8 bytes a row each: ~17 MB at N = 2 * 10^6)
    IN_MEMORY = 8

    def __init__(self):
        self._memory = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, n: int) -> Ordering | None:
        """The ordering stored under ``key`` when it is one of an N = ``n`` system; else
        None."""
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                return found
        found = self._read(key)
        if found is None or not found.valid_for(n):
            return None
        self._remember(key, found)
        return found

    def put(self, key: str, ordering: Ordering) -> None:
        """Keep ``ordering`` under ``key``, in memory and on disk (a disk that cannot be
        written is passed over: the store is an optimization)."""
        self._remember(key, ordering)
        buf = io.BytesIO()
        np.savez(buf, perm=ordering.perm, tree=ordering.tree)
        try:
            from ..cache_dir import cache_subdir, write_atomically

            write_atomically(cache_subdir("cudss") / f"{key}.npz", buf.getvalue())
        except OSError:
            pass

    def discard(self, key: str) -> None:
        """Drop the ordering under ``key`` from memory and disk (one cuDSS refused)."""
        with self._lock:
            self._memory.pop(key, None)
        try:
            from ..cache_dir import cache_root

            (cache_root() / "cudss" / f"{key}.npz").unlink(missing_ok=True)
        except OSError:
            pass

    def forget(self) -> None:
        """Drop the in-memory orderings (tests; the disk keeps its files)."""
        with self._lock:
            self._memory.clear()

    def _remember(self, key, ordering) -> None:
        with self._lock:
            self._memory[key] = ordering
            self._memory.move_to_end(key)
            while len(self._memory) > self.IN_MEMORY:
                self._memory.popitem(last=False)

    @staticmethod
    def _read(key: str) -> Ordering | None:
        from ..cache_dir import cache_root

        path = cache_root() / "cudss" / f"{key}.npz"
        try:
            with np.load(path, allow_pickle=False) as z:
                return Ordering(np.asarray(z["perm"]), np.asarray(z["tree"]))
        except Exception:      # missing, damaged (a bad zip, a missing member): ignored
            return None


#: the process's store
ORDERINGS = OrderingStore()
