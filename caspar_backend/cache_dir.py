"""Where caspar keeps what it builds once per machine: ``$CASPAR_CACHE_DIR`` (default
``~/.cache/caspar``), one sub-folder per kind (``cuda``, ``numba``, ``casadi``,
``problems``), and how an entry is written so that a reader never sees half of one.

Readers look an entry up by its final name only; a writer writes a temporary file in the
same folder and renames it over that name (:func:`write_atomically`), which POSIX makes
atomic.  An interrupted writer (Ctrl-C, a crash) therefore leaves at most a stray
temporary file, never a truncated entry that a later run would load.
"""

from __future__ import annotations

import os
import secrets
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
    onto ``path`` is atomic), with an ordinary file's permissions (0666 less the umask,
    as numba's cache files: a cache built by one user -- a container image's build -- is
    readable by another; ``tempfile.mkstemp`` would make it 0600)."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"no free temporary name next to {path}")


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
