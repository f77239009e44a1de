"""IPOPT's options file: ``ipopt.opt`` in the working directory, read at every solve.

IPOPT's ``IpoptApplication::Initialize`` reads the file named by ``option_file_name``
(default ``ipopt.opt``; ``""``: none) from the working directory, one option per line,
``name value`` (a value with spaces quoted), ``#`` starting a comment.  It sets the
options the code did not: one set both ways keeps the code's value (IPOPT's options set
in code disallow clobbering; IPOPT prints a warning, as caspar does -- checked against
IPOPT 3.14.19, casadi's build).  Scripts and tools rely on it (a file left next to a
model, Pyomo's note on options its command line cannot pass), so caspar reads it the
same way: :func:`file_options` gives its options as text, which
:func:`~.options.resolve_options` puts under the caller's and validates like any other
(a number's text is read as IPOPT reads it).

The file is parsed once per (path, modification time, size); a missing file is no
options.  A line with a name but no value, or a file that cannot be read, is an
:class:`~caspar_backend.errors.OptionError` naming the file and the line.
"""

from __future__ import annotations

import os
import shlex

from ..errors import OptionError

#: the options file IPOPT reads unless option_file_name says otherwise
DEFAULT_NAME = "ipopt.opt"

_parsed: dict = {}      # path -> ((mtime_ns, size), {name: text})


def file_key(name: str):
    """``(path, mtime_ns, size)`` of the options file ``name`` (relative names against
    the working directory), or None where there is none (or ``name`` is empty)."""
    if not name:
        return None
    try:
        path = os.path.abspath(name)     # (os.getcwd raises where the directory is gone)
        st = os.stat(path)
    except OSError:
        return None
    return path, st.st_mtime_ns, st.st_size


def file_options(name: str) -> dict:
    """The options set in the file ``name`` as ``{option: text}`` (IPOPT's format, the
    module doc); {} where there is no such file."""
    key = file_key(name)
    if key is None:
        return {}
    path, mtime, size = key
    hit = _parsed.get(path)
    if hit is not None and hit[0] == (mtime, size):
        return hit[1]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as exc:
        raise OptionError(f"options file {path}: cannot be read ({exc})") from None
    opts = {}
    for k, line in enumerate(text.splitlines(), 1):
        try:        # (a quoted value keeps its spaces: output_file "my run.txt")
            words = shlex.split(line, comments=True)
        except ValueError:
            raise OptionError(f"options file {path}, line {k}: {line.strip()!r} has an "
                              f"unmatched quote") from None
        if not words:
            continue
        if len(words) < 2:
            raise OptionError(f"options file {path}, line {k}: {line.strip()!r} has no "
                              f"value (IPOPT's format: 'name value')")
        opts[words[0]] = words[1]
    if len(_parsed) > 64:
        _parsed.clear()
    _parsed[path] = ((mtime, size), opts)
    return opts
