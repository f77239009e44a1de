"""Where the compiled kernels live on disk, and whether they are there -- without importing
Numba (``Problem.solve`` asks this on every call that could take the compiled path).

The kernels compile once per machine into ``$CASPAR_CACHE_DIR/numba/<caspar version>-<hash
of the kernel sources>`` (default ``~/.cache/caspar``).  :func:`mark_ready` writes the file
``ready`` there after a complete compile (:func:`caspar_backend.compiled.warmup`); its
presence is what :func:`is_ready` tests (:data:`READY_FILE`).  Numba keys each entry by its own version and the
CPU as well: a machine whose CPU differs from the one that compiled recompiles on load.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..cache_dir import cache_root, write_atomically
from ..version import __version__

#: the folder of the kernel modules
KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
#: modules whose constants the kernels import (compile-time constants in the machine code)
CONSTANT_SOURCES = ("solver/linesearch.py", "solver/inertia.py",
                    "solver/perturbation.py", "kkt/augmented.py")


def _sources_hash() -> str:
    """sha256 (16 hex digits) of every kernel module and of :data:`CONSTANT_SOURCES`: a
    kernel's cached machine code inlines its callees from other modules and the constants
    it imports, so a change of any of these files must invalidate every entry (Numba's own
    stamp only watches the function's own file)."""
    h = hashlib.sha256()
    root = KERNEL_DIR.parent.parent
    for p in sorted(KERNEL_DIR.glob("*.py")) + [root / c for c in CONSTANT_SOURCES]:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


STAMP = _sources_hash()


#: the file :func:`mark_ready` writes; its name changes when :func:`~.solve.warmup`
#: compiles more entry points (``ready.3``: the tape evaluator's, :mod:`.tape_evaluator`,
#: and QDLDL's, :mod:`.ldl`), so that a cache completed by an older warmup is completed
#: again
READY_FILE = "ready.3"


def kernel_cache_dir() -> Path:
    """``$CASPAR_CACHE_DIR/numba/<caspar version>-<sources hash>``."""
    return cache_root() / "numba" / f"{__version__}-{STAMP}"


def is_ready() -> bool:
    """Whether a complete compile of these kernel sources is in the cache."""
    return (kernel_cache_dir() / READY_FILE).is_file()


def mark_ready() -> None:
    """Record a complete compile (written atomically: a reader sees it whole or not)."""
    d = kernel_cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    write_atomically(d / READY_FILE, (__version__ + "\n").encode())
