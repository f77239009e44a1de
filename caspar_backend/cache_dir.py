"""Where caspar keeps what it builds once per machine: ``$CASPAR_CACHE_DIR`` (default
``~/.cache/caspar``), one sub-folder per kind (``cuda``, ``numba``, ``casadi``, ``problems``), and how
an entry is written so that a reader never sees half of one.

Readers look an entry up by its final name only; a writer writes a temporary file in the
same folder and renames it over that name (:func:`write_atomically`), which POSIX makes
atomic.  An interrupted writer (Ctrl-C, a crash) therefore leaves at most a stray
temporary file, never a truncated entry that a later run would load.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_root() -> Path:
    """``$CASPAR_CACHE_DIR``, or ``~/.cache/caspar`` (not created here)."""
    return Path(os.environ.get("CASPAR_CACHE_DIR", Path.home() / ".cache" / "caspar"))


def cache_subdir(kind: str) -> Path:
    """``cache_root() / kind``, created if missing."""
    d = cache_root() / kind
    d.mkdir(parents=True, exist_ok=True)
    return d


def temporary_sibling(path: Path) -> Path:
    """A new, empty, uniquely named file next to ``path`` (same folder, so a rename
    onto ``path`` is atomic)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    return Path(tmp)


def write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` or what it held before -- never a part of ``data``."""
    path = Path(path)
    tmp = temporary_sibling(path)
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
