"""On-disk cache of the CUDA batch kernel: ``<kernel_cache_dir()>/cuda/<stamp>``, and
whether a complete compile is there.

The global kernel (:mod:`.launch`) inlines every CPU kernel it calls, so a change of any
of them must invalidate the entry; Numba's own stamp only watches the kernel's file.
:class:`CudaKernelCacheLocator` stamps entries with :data:`.._jit._STAMP` (the hash of
every kernel module and the constants they import) and the hash of this folder's
sources.  numba-cuda adds its version and the compute capability to the key itself.
Where numba-cuda has no pluggable locators (older versions) the kernel is not cached.

A compile takes minutes (NVVM and ptxas over one large kernel), so ``solve_batch`` does
not wait for it: :func:`is_ready` tells whether a complete compile of this kernel (rows
or columns, :mod:`.launch`) for this GPU's compute capability and this numba-cuda is in
the cache -- a marker file written by :func:`mark_ready` after the compile saved its
entry (:func:`.launch.compile_ahead`, run by ``caspar warmup`` or the background compile
``python -m caspar_backend.compiled --cuda``).  Nothing here imports Numba or CUDA
libraries beyond CuPy's device query.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

_DIR = Path(__file__).resolve().parent


def _stamp() -> str:
    from ..cache import STAMP

    h = hashlib.sha256(STAMP.encode())
    for p in sorted(_DIR.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


#: numba-cuda refuses to cache a kernel that links a helper library ("Cannot pickle
#: CUDACodeLibrary with linking files"); the kernels' 2-D slot views (``reshape``), which
#: linked its reshape_funcs.cu in the first GPU run, now index 1-D, and the H200 run of
#: 2026-12-02 saved and reloaded the entry (False: compile in every process)
CACHEABLE = True


def cuda_cache_dir() -> Path:
    """``<kernel_cache_dir()>/cuda``: the CUDA kernel's numba-cuda entries and markers."""
    from ..cache import kernel_cache_dir

    return kernel_cache_dir() / "cuda"


def compute_capability() -> str:
    """The current GPU's compute capability as CuPy spells it ('90' for 9.0)."""
    import cupy

    return cupy.cuda.Device().compute_capability


def capability_pair() -> tuple[int, int]:
    """The current GPU's compute capability as (major, minor): (9, 0) for '90'."""
    s = compute_capability()
    return int(s[:-1]), int(s[-1])


def _marker(columns: bool) -> Path:
    """The marker of a complete compile of the rows or columns kernel of these sources
    for the current GPU and numba-cuda (the key numba-cuda's own entries carry too)."""
    from importlib.metadata import version

    kind = "columns" if columns else "rows"
    return cuda_cache_dir() / (f"ready-{kind}-{_stamp()}-sm{compute_capability()}-"
                               f"{version('numba-cuda')}")


def state_path(kind: str, cc: str) -> Path:
    """The file of a kernel object ``kind`` ('prebuilt-rows', 'extern-rows', ...) for
    compute capability ``cc`` ('90' for 9.0) pickled by this numba-cuda from these
    sources: ``<kind>-<stamp>-sm<cc>-<numba-cuda>.pkl.xz``."""
    from importlib.metadata import version

    return cuda_cache_dir() / f"{kind}-{_stamp()}-sm{cc}-{version('numba-cuda')}.pkl.xz"


def prebuilt_path(columns: bool, cc: str) -> Path:
    """The file of the rows or columns kernel prebuilt for compute capability ``cc`` ('90'
    for 9.0) (:mod:`.prebuilt`)."""
    return state_path("prebuilt-columns" if columns else "prebuilt-rows", cc)


def is_ready(columns: bool) -> bool:
    """Whether a complete compile of the kernel is in the cache (module docstring), or a
    prebuilt kernel for this GPU (:func:`prebuilt_path`)."""
    return _marker(columns).is_file() or prebuilt_path(columns, compute_capability()).is_file()


def mark_ready(columns: bool) -> None:
    """Record a complete compile (atomically: a reader sees the marker whole or not)."""
    from ...cache_dir import write_atomically

    m = _marker(columns)
    m.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(m, b"ready\n")


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
    stamp = _stamp()

    class CudaKernelCacheLocator(caching._CacheLocator):
        """The kernel of :mod:`.launch` only (other files: ``None``)."""

        def __init__(self, py_func, py_file):
            self._lineno = py_func.__code__.co_firstlineno
            # a folder per stamp: numba-cuda keeps one index per function and folder and
            # empties it when the stamp differs, so two source versions sharing a folder
            # would evict each other's entry at every save
            self._cache_path = str(cuda_cache_dir() / stamp)

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
