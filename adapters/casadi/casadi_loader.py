"""``casadi.Function.load`` / ``deserialize`` for Functions holding caspar's nlpsol.

**Why casadi cannot do it alone.**  The solver node of ``nlpsol(..., 'caspar', ...)`` is a
``casadi.Callback`` (:class:`~.nlpsol_function.SolverCallback`).  casadi serializes a
Function as its class name and its body (``ProtoFunction::serialize`` ->
``serialize_type`` + ``serialize_body``, casadi/core/function_internal.cpp); a Callback
does not override either, so it is written as ``"CallbackInternal"`` followed by the body
common to all Functions -- writing succeeds.  Reading looks the name up in the static
table ``FunctionInternal::deserialize_map`` (same file: ``MXFunction``, ``SXFunction``,
``Nlpsol``, ``External``, ...), which has no ``CallbackInternal`` entry, and fails with
``FunctionInternal::deserialize: not found 'CallbackInternal'``.  A compiled nlpsol
plugin would be found by name (``Nlpsol`` -> ``PluginInterface::plugin_deserialize`` ->
``libcasadi_nlpsol_<name>.so``), but a plugin is a C++ subclass of casadi's internal
``Nlpsol``, whose headers the casadi wheels do not ship.  And a Python Callback has no
hook to write its own body (casadi/core/callback.hpp has none).

**What caspar does.**  Two halves:

* writing: the solver Callback carries, in its ``jit_options`` (a Function option casadi
  serializes with the body and otherwise ignores while ``jit`` is off), a record
  ``{'caspar_nlpsol': {...}}`` holding the problem as a casadi Function and the nlpsol
  options (:mod:`.nlpsol_serial`); casadi writes it whenever the Function, or any Function
  calling it, is serialized -- no cost before that;
* reading: a small C++ library (``casadi_loader.cpp``, built once per machine with the
  system C++ compiler against the casadi wheel's public headers, cached under
  ``$CASPAR_CACHE_DIR/casadi``) adds the ``CallbackInternal`` entry to casadi's table.
  Its reader consumes the common body exactly as casadi's deserializing constructor
  does, takes the record, and calls :func:`.nlpsol_load.restore` (through ctypes),
  which compiles the problem again and returns the new solver Callback to casadi.  A
  Callback without the record (a user's own) still fails, with casadi's message.

So ``casadi.Function.load(path)`` works in any process where this loader is installed:
importing caspar's CasADi front-end (``from caspar_backend.casadi import nlpsol``, or
:func:`caspar_backend.casadi.load`: :mod:`.nlpsol_load`) installs it, building the
library on first use.
A process that never imports caspar sees casadi's error.  Needs: a C++ compiler
(``$CXX``, else ``c++``/``g++``/``clang++``) the first time on a machine; Linux or macOS.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from caspar_backend.cache_dir import cache_subdir, temporary_sibling
from caspar_backend.errors import CasparError

SOURCE = Path(__file__).with_name("casadi_loader.cpp")
LIBRARY = "libcaspar_casadi_loader" + (".dylib" if sys.platform == "darwin" else ".so")


class LoaderError(CasparError, RuntimeError):
    """caspar's casadi loader could not be built or installed (final)."""


_RESTORE_T = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                              ctypes.POINTER(ctypes.c_void_p))
_lock = threading.Lock()
_state: dict = {"lib": None, "hook": None, "restore": None, "error": None}


def _casadi_dirs() -> tuple[Path, Path]:
    """(the casadi package folder holding libcasadi, its public include folder)."""
    import casadi

    root = Path(casadi.__file__).resolve().parent
    return root, root / "include"


def _compiler() -> str:
    for c in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if c and shutil.which(c):
            return shutil.which(c)
    raise LoaderError("no C++ compiler found ($CXX, c++, g++, clang++): caspar's casadi "
                      "loader is built once per machine with one")


def library_path(source: Path = SOURCE, library: str = LIBRARY) -> Path:
    """Where the library built from ``source`` (default: the loader) for this casadi
    installation is cached."""
    import casadi

    root, _ = _casadi_dirs()
    h = hashlib.sha256(source.read_bytes())
    for part in (casadi.__version__, str(root), sys.platform):
        h.update(b"\0" + part.encode())
    return cache_subdir("casadi") / h.hexdigest()[:16] / library


def build(source: Path = SOURCE, library: str = LIBRARY, opt: str = "-O1",
          flags: tuple = ()) -> Path:
    """The library of ``source`` (default: the loader), compiled now against casadi if it
    is not cached (about 2 s); written atomically
    (:func:`caspar_backend.cache_dir.write_atomically`'s rule)."""
    path = library_path(source, library)
    if path.exists():
        return path
    cxx = _compiler()
    root, include = _casadi_dirs()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    cmd = [cxx, opt, *flags, "-shared", "-fPIC", "-std=c++11", "-I", str(include),
           str(source), "-L", str(root), "-lcasadi", f"-Wl,-rpath,{root}", "-o", str(tmp)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise LoaderError(f"building {library} failed:\n" + " ".join(cmd)
                              + "\n" + run.stderr[-4000:])
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _restore(payload, name, out) -> int:
    """ctypes entry called by the C++ reader: rebuild the node (the ``restore`` given
    to :func:`install`), hand casadi SWIG's pointer to its ``casadi::Callback``.  Never
    lets an exception cross into C++."""
    try:
        cb = _state["restore"](payload.decode(), name.decode())
        out[0] = int(cb.this)
        return 0
    except BaseException as e:          # noqa: BLE001 - reported through casadi
        text = f"{type(e).__name__}: {e}" if not isinstance(e, CasparError) else str(e)
        _state["lib"].caspar_loader_set_error(text.encode(errors="replace"))
        return 1


def install(restore, build_if_missing: bool = True) -> bool:
    """Add caspar's reader to casadi's table (idempotent); ``restore(payload, name)``
    rebuilds a node from its record (casadi's string serialization of the record's
    dict) and returns its ``casadi.Callback``.  ``build_if_missing=False``: only when
    the library is already built (no compiler run).  Returns whether the loader is
    installed; raises :class:`LoaderError` when it was asked to build and could not."""
    with _lock:
        _state["restore"] = restore
        if _state["lib"] is not None:
            return True
        path = library_path()
        if not path.exists():
            if not build_if_missing:
                return False
            build()
        lib = ctypes.CDLL(str(path))
        lib.caspar_loader_install.argtypes = [_RESTORE_T]
        lib.caspar_loader_set_error.argtypes = [ctypes.c_char_p]
        hook = _RESTORE_T(_restore)
        if lib.caspar_loader_install(hook) != 0:
            raise LoaderError("casadi already has another reader for 'CallbackInternal'")
        _state.update(lib=lib, hook=hook)   # the hook must outlive every load
        return True


def installed() -> bool:
    return _state["lib"] is not None


def try_install(restore) -> None:
    """:func:`install` where it must not fail (front-end import): a failure is kept in
    ``_state['error']``; loading then raises casadi's error, and an explicit
    :func:`install` the reason."""
    try:
        install(restore)
    except (LoaderError, OSError) as e:
        _state["error"] = e


class NativeLibrary:
    """Final.  A C++ source of caspar's built once per machine (:func:`build`, ``-O2``) and
    loaded by ctypes with its ``signatures`` ({name: (restype, argtypes)}), on first use;
    :meth:`get` is the library, or None where it cannot be built (no compiler): the
    callers keep their NumPy passes for that case."""

    def __init__(self, source: Path, library: str, signatures: dict):
        self.source, self.library, self.signatures = source, library, signatures
        self._lock = threading.Lock()
        self._lib = None            # None: not tried yet; False: cannot be had

    def get(self):
        with self._lock:
            if self._lib is None:
                try:
                    lib = ctypes.CDLL(str(build(self.source, self.library, "-O2")))
                    for name, (res, args) in self.signatures.items():
                        fn = getattr(lib, name)
                        fn.restype, fn.argtypes = res, args
                    self._lib = lib
                except (LoaderError, OSError, AttributeError):
                    self._lib = False
            return self._lib or None

