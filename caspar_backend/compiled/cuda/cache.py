"""On-disk cache of the CUDA batch kernel: ``<kernel_cache_dir()>/cuda``.

The global kernel (:mod:`.launch`) inlines every CPU kernel it calls, so a change of any
of them must invalidate the entry; Numba's own stamp only watches the kernel's file.
:class:`CudaKernelCacheLocator` stamps entries with :data:`.._jit._STAMP` (the hash of
every kernel module and the constants they import) and the hash of this folder's
sources.  numba-cuda adds its version and the compute capability to the key itself.
Where numba-cuda has no pluggable locators (older versions) the kernel is not cached.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

_DIR = Path(__file__).resolve().parent


def _stamp() -> str:
    from ..kernels._jit import _STAMP

    h = hashlib.sha256(_STAMP.encode())
    for p in sorted(_DIR.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


#: numba-cuda refuses to cache a kernel that links a helper library ("Cannot pickle
#: CUDACodeLibrary with linking files"); the kernels' 2-D slot views (``reshape``), which
#: linked its reshape_funcs.cu in the first GPU run, now index 1-D, and the H200 run of
#: 2026-12-02 saved and reloaded the entry (False: compile in every process)
CACHEABLE = True


def install() -> bool:
    """Register the locator with numba-cuda; True if caching is available."""
    if not CACHEABLE:
        return False
    try:
        from numba.cuda.core import caching
    except ImportError:
        return False
    if any(c.__name__ == "CudaKernelCacheLocator" for c in caching.CacheImpl._locator_classes):
        return True
    from ..kernels._jit import kernel_cache_dir

    stamp = _stamp()

    class CudaKernelCacheLocator(caching._CacheLocator):
        """The kernel of :mod:`.launch` only (other files: ``None``)."""

        def __init__(self, py_func, py_file):
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(kernel_cache_dir() / "cuda")

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return stamp

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if Path(py_file).resolve().parent != _DIR:
                return None
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    caching.CacheImpl._locator_classes.insert(0, CudaKernelCacheLocator)
    return True
