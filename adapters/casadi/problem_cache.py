"""Compiled problems of large SX programs, kept on disk for the next process.

Reading, grouping and deriving an SX program of 10^5-10^6 instructions takes seconds;
a user's second run of the same model repeats all of it.  :func:`cached_problem` keys
the compiled :class:`~caspar_backend.problem.Problem` by the program itself and loads
it back (:mod:`caspar_backend.persist`) when the same program comes again:

    key = SHA-256( the program of Function('caspar_nlp', [x, p], [f, g]): its
                   instruction arrays (.sxexport.read), or where they cannot be read
                   directly its export_code('matlab') text -- every instruction,
                   constants to the last bit --,
                   the sparsity of x, p, f, g, the reader's options, casadi's version,
                   caspar's build fingerprint )

so a changed structure, constant or option is another key (never a stale entry) and a
new caspar build never loads an old file.  What is not structure -- the call's ``x0``,
bounds and ``p``, and the symbols' names -- is not in the key: it is set on the loaded
problem's model, as :func:`~.nlp.from_casadi` sets it on a fresh one.

Entries live in ``$CASPAR_CACHE_DIR/problems`` (:mod:`caspar_backend.cache_dir`),
written atomically, at most :data:`MAX_ENTRIES` of them and :data:`MAX_BYTES` in all
(the least recently used removed; the newest is always kept).

Programs below :data:`MIN_INSTRUCTIONS` build in less time than a load: they are kept in
this process instead, for a script that builds the same small model again and again (a
solver made per call, an MPC step's problem rebuilt): at most :data:`MEMORY_ENTRIES`,
keyed by the same key and the symbols' names (the shared expression graph prints them),
handed out as :meth:`twins <caspar_backend.problem.Problem.twin>` of the kept problem --
the groups, derivatives and the compiled path's workspace layouts shared, the values and
caches their own.  ``CASPAR_PROBLEM_CACHE=0`` turns both off.  Problems holding opaque
calls (interpolants, callbacks, ...) do not pickle and are never kept.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import pickle
import threading
import time
from pathlib import Path

import numpy as np

#: programs with at least this many instructions are kept
MIN_INSTRUCTIONS = 20_000
#: entries kept in the folder, and their total size; the least recently used beyond
#: either are removed
MAX_ENTRIES = 16
#: a loaded entry's modification time is moved to now when older than this (seconds)
TOUCH_AFTER = 3600.0
MAX_BYTES = 2 << 30
#: small programs' problems kept in this process (the least recently used beyond: dropped)
MEMORY_ENTRIES = 64

_memory: "collections.OrderedDict[str, object]" = collections.OrderedDict()
_memory_lock = threading.Lock()


def enabled() -> bool:
    """False when ``CASPAR_PROBLEM_CACHE`` is ``0``, ``false``, ``no`` or ``off``."""
    return os.environ.get("CASPAR_PROBLEM_CACHE", "1").strip().lower() not in (
        "0", "false", "no", "off")


def program_key(program, sparsities, options: dict) -> str:
    """The hex SHA-256 key of the module doc: ``program`` the SX Function's instruction
    arrays (an :class:`~.sxdecode.Algorithm`: :func:`.sxexport.read`) or its
    ``export_code('matlab')`` text (bytes: :func:`.sxdecode.program_text`), which the
    bulk reader reads too; ``sparsities`` casadi Sparsity objects, ``options`` the
    reader's options (JSON-serializable)."""
    import casadi as ca

    from caspar_backend.persist import build_fingerprint

    h = hashlib.sha256()
    if isinstance(program, bytes):
        h.update(b"text\0" + program)
    else:
        _hash_arrays(h, program)
    for sp in sparsities:
        # a dense pattern is its shape (casadi's serialization of one lists every
        # row index: 0.05 s for 10^6 entries)
        h.update(b"\0dense %d %d" % sp.shape if sp.is_dense()
                 else b"\0" + sp.serialize().encode())
    h.update(b"\0" + json.dumps([options, ca.__version__, build_fingerprint()],
                                sort_keys=True).encode())
    return h.hexdigest()


def _hash_arrays(h, alg) -> None:
    """Feed ``alg``'s fields to ``h``, each in its narrowest exact integer type (op
    codes as bytes, slots as int32 where they fit), the constants' bits (-0.0 is not
    0.0): the whole program in about 21 bytes an instruction."""
    from . import optable as T
    from .sxdecode import Algorithm

    assert isinstance(alg, Algorithm)
    h.update(b"arrays\0" + np.int64(alg.size).tobytes())
    for name in ("op", "w", "a", "b", "idx", "nz"):
        v = getattr(alg, name)
        lo, hi = (int(v.min()), int(v.max())) if v.size else (0, 0)
        t = np.uint8 if name == "op" and 0 <= lo and hi < 256 else \
            np.int32 if -2 ** 31 <= lo and hi < 2 ** 31 else np.int64
        h.update(np.dtype(t).char.encode() + b"\0")
        h.update(np.ascontiguousarray(v.astype(t, copy=False)))
    h.update(np.ascontiguousarray(alg.value[alg.op == T.CODES["OP_CONST"]]).view(np.uint64))


def _folder() -> Path:
    from caspar_backend.cache_dir import cache_subdir

    return cache_subdir("problems")


def memory_key(key: str, *symbols: str) -> str:
    """The in-process key of a small program: ``key`` and its symbols (casadi's
    serialization of x and p: their names)."""
    h = hashlib.sha256(key.encode())
    for text in symbols:
        h.update(b"\0" + text.encode())
    return h.hexdigest()


def load(key: str, size: int = MIN_INSTRUCTIONS):
    """The Problem kept under ``key``, or None (absent, or unreadable: then removed);
    ``size``: the program's instructions (below :data:`MIN_INSTRUCTIONS`: a twin of the
    problem kept in this process, ``key`` a :func:`memory_key`)."""
    if size < MIN_INSTRUCTIONS:
        with _memory_lock:
            kept = _memory.get(key)
            if kept is not None:
                _memory.move_to_end(key)
        return None if kept is None else kept.twin()
    from caspar_backend.errors import ModelError
    from caspar_backend.persist import load_problem

    try:
        path = _folder() / f"{key}.caspar"
        if not path.exists():
            return None
    except OSError:
        return None                         # no cache folder to be had (read-only home)
    try:
        problem = load_problem(path)
    except (ModelError, OSError, AttributeError, ImportError, EOFError):
        path.unlink(missing_ok=True)
        return None
    try:
        # recently used (for the trim's order), to the hour: the metadata write costs
        # 6-10 ms of a warm setup, once an hour is enough to keep a used entry
        if time.time() - path.stat().st_mtime > TOUCH_AFTER:
            os.utime(path)
    except OSError:
        pass
    return problem


def store(key: str, problem, size: int = MIN_INSTRUCTIONS) -> bool:
    """Keep ``problem`` under ``key`` (atomically), then trim the folder
    (:data:`MAX_ENTRIES`, :data:`MAX_BYTES`) -- below :data:`MIN_INSTRUCTIONS`
    (``size``) a twin of it in this process (:data:`MEMORY_ENTRIES`); whether it was kept
    (a problem that does not pickle, opaque calls, or an unwritable folder: not)."""
    from caspar_backend.errors import ModelError
    from caspar_backend.persist import save

    if problem.model.opaque is not None:
        return False
    if size < MIN_INSTRUCTIONS:
        with _memory_lock:
            _memory[key] = problem.twin()
            _memory.move_to_end(key)
            while len(_memory) > MEMORY_ENTRIES:
                _memory.popitem(last=False)
        return True
    try:
        folder = _folder()
        save(problem, folder / f"{key}.caspar", symbol_names=False)  # set on a hit
    except (OSError, pickle.PicklingError, TypeError, AttributeError, ModelError):
        return False  # a full or read-only disk, or a model that does not pickle
    try:
        entries = sorted(((p.stat().st_mtime, p.stat().st_size, p)
                          for p in folder.glob("*.caspar")), reverse=True)
        total = 0
        for k, (_, size, path) in enumerate(entries):      # newest first
            total += size
            if k and (k >= MAX_ENTRIES or total > MAX_BYTES):
                path.unlink(missing_ok=True)
    except OSError:
        pass                     # another process trimming at the same time
    return True


def set_values(problem, values: dict, var_names, param_names) -> None:
    """Set the call's ``x0``, ``lbx``, ``ubx``, ``lbg``, ``ubg`` and ``p`` (float64
    vectors of the model's lengths) and the symbols' names on ``problem``'s model."""
    model = problem.model
    for name, v in values.items():
        setattr(model, name, np.array(v, dtype=float))
    model.var_names = model.graph.var_names = var_names
    model.param_names = model.graph.param_names = param_names
