"""Compiled problems on disk: :meth:`Problem.save <caspar_backend.problem.Problem.save>`
and :func:`load_problem`.

A file is

    b"CASPAR-PROBLEM\\n"  header line
    JSON line             {"format": 1, "caspar": version, "build": fingerprint,
                           "n": n, "m": m, "n_params": n_params, "groups": count}
    pickle                the Problem (:meth:`Problem.__getstate__`: model, pattern
                          groups and derivative templates; no compiled code)

Loading skips reading, grouping and deriving; the evaluators are built on first use, and
the CUDA module comes from the NVRTC disk cache (:mod:`caspar_backend.cuda_compile`)
when this machine compiled it before.  ``build`` is the SHA-256 of caspar's Python
sources: a file written by another build is refused (its pickled classes may mean
something else now) with a message saying to rebuild it.  The pickle runs code when
loaded: load only files you trust, as with any pickle.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import threading
from functools import lru_cache
from pathlib import Path

from .errors import ModelError
from .version import __version__

MAGIC = b"CASPAR-PROBLEM\n"
FORMAT = 1


@lru_cache(maxsize=1)
def build_fingerprint() -> str:
    """SHA-256 (hex, 16 digits) over caspar's Python sources: the package and the
    front ends installed under it (``caspar_backend.adapters``), file by file in order
    of relative path (``/``-separated), each as its path, a NUL and its bytes."""
    import importlib.util

    roots = [os.path.dirname(os.path.realpath(__file__))]
    spec = importlib.util.find_spec("caspar_backend.adapters")
    if spec is not None and spec.submodule_search_locations:
        roots += [os.path.realpath(p) for p in spec.submodule_search_locations]
    h = hashlib.sha256()
    for root in dict.fromkeys(roots):
        for rel in _python_files(root):
            h.update(rel.encode())
            h.update(b"\0")
            with open(os.path.join(root, rel), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def _python_files(root: str) -> list:
    """The ``.py`` files under ``root`` outside ``__pycache__``, as sorted relative
    paths with ``/`` separators (os.walk: the build fingerprint is read on every
    problem-cache load, pathlib's per-path objects cost more than the hashing)."""
    out = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(top, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out += [prefix + f for f in files if f.endswith(".py")]
    return sorted(out)


class _NamelessPickler(pickle.Pickler):
    """Pickles the sequences whose ids are in ``skipped`` as ``None``."""

    def __init__(self, f, skipped: set):
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self._skipped = skipped

    def reducer_override(self, obj):
        if id(obj) in self._skipped:
            return (_no_names, ())
        return NotImplemented


def _no_names():
    return None


def save(problem, path, *, symbol_names: bool = True) -> None:
    """Write ``problem`` to ``path`` (module doc), atomically: a partial file never
    replaces a good one.  A problem calling functions evaluated through its front end
    (CasADi interpolants, integrators, callbacks) is refused, naming them: those
    objects do not pickle.

    ``symbol_names=False`` stores the variables' and parameters' names as ``None``: for
    a caller that sets them on every load (the CasADi problem cache), as building 10^6
    names from a front end's symbols costs seconds."""
    problem._refuse_opaque("saving the problem")
    head = dict(format=FORMAT, caspar=__version__, build=build_fingerprint(),
                n=int(problem.n), m=int(problem.m), n_params=int(problem.n_params),
                groups=len(problem.groups))
    path = Path(path)
    # one temporary per process and thread: two writers of one path never share it
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC)
            f.write(json.dumps(head).encode() + b"\n")
            if symbol_names:
                pickle.dump(problem, f, protocol=pickle.HIGHEST_PROTOCOL)
            else:
                m = problem.model
                skipped = {id(v) for v in (m.var_names, m.param_names, m.graph.var_names,
                                           m.graph.param_names) if v is not None}
                _NamelessPickler(f, skipped).dump(problem)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_header(path) -> dict:
    """The JSON header of a saved problem (no unpickling)."""
    with open(path, "rb") as f:
        return _header(f, path)


def _header(f, path) -> dict:
    if f.read(len(MAGIC)) != MAGIC:
        raise ModelError(f"{path} is not a saved caspar problem (no CASPAR-PROBLEM header)")
    try:
        head = json.loads(f.readline())
    except ValueError as e:
        raise ModelError(f"{path}: the saved problem's header is damaged ({e})") from None
    return head


def load_problem(path):
    """The :class:`~caspar_backend.problem.Problem` saved at ``path`` by this build of
    caspar (module doc); a file of another format or build raises a ModelError saying
    so."""
    with open(path, "rb") as f:
        head = _header(f, path)
        if head.get("format") != FORMAT:
            raise ModelError(f"{path}: saved problem format {head.get('format')!r}, this "
                             f"caspar reads format {FORMAT}; rebuild the problem")
        if head.get("build") != build_fingerprint():
            raise ModelError(
                f"{path} was saved by another build of caspar (caspar {head.get('caspar')}, "
                f"build {head.get('build')}; this is caspar {__version__}, build "
                f"{build_fingerprint()}); rebuild the problem from its model and save it "
                f"again")
        # the collector off while unpickling: tens of thousands of new objects (the
        # expression graphs) would otherwise trigger collections that walk every live
        # object of the process, several times the load itself in a large one
        enabled = gc.isenabled()
        gc.disable()
        try:
            problem = pickle.load(f)
        except (EOFError, pickle.UnpicklingError) as e:
            raise ModelError(f"{path}: the saved problem is truncated or damaged ({e})") \
                from None
        finally:
            if enabled:
                gc.enable()
    # (the class by its module: problem.py imports this module, not the other way)
    if type(problem).__module__ != "caspar_backend.problem":
        raise ModelError(f"{path} holds a {type(problem).__name__}, not a Problem")
    return problem
