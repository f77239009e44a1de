"""The fused ops of :mod:`.fused` as raw CUDA kernels of one module, launched directly.

A CuPy ``ElementwiseKernel`` / ``ReductionKernel`` call resolves its argument types,
broadcasts and, for a reduction, plans its blocks on every call: 15-40 us of host time
each, and an interior-point iteration makes ~45 of them.  Here every op of
:data:`.fused.OPS` is a kernel with a fixed signature -- float64 vectors, int64 index
sets, float64 scalars, contiguous 1-D arrays -- in one ``RawModule`` built once per
process, and a call is one launch whose grid follows from the size alone.

Parameter kinds of a spec (:class:`Elementwise`, :class:`Reduction`): ``vec`` a
float64 vector read at ``i`` (``const double*``), ``raw`` a float64 vector read
anywhere, ``idx`` an int64 index vector (``const long long*``), ``scalar`` a float64
number, ``inout`` the float64 vector written in place (the last argument).

* **Elementwise**: a grid-stride loop over ``i < n`` (``n`` the size of the spec's
  ``size`` argument) running ``body``; ``out``, when named, is a new vector of size n.
* **Reductions**, one launch with a fixed partition: ``B = min(ceil(n / 256), 256)``
  blocks of 256 threads each fold their grid-stride share of ``map`` and then a
  shared-memory tree into ``partial[b]``; the block that finishes last (a done-counter,
  CUDA's threadfence reduction) folds the B partials by the same tree into the 0-d
  result and sets the counter back to zero.  The sums are in a fixed order: the same
  bits on every run.  ``max`` and ``min`` propagate NaN, as NumPy's reductions do.
  Partials and counter are per stream (kernels on one stream run in order).
* **Reductions** (:class:`Reductions`): up to :data:`MAX_COLUMNS` reductions in the same
  launch and the same partition, each a *column* ``(map, reduce, identity)`` with its
  own fold, into consecutive entries of a float64 vector (returned as a tuple of
  :class:`Column`).  The vectors they read may
  differ in length: ``i`` runs up to the longest ``vec`` or ``idx`` parameter, whose
  length the kernel knows as ``n_<name>``, and a map guards its own reads (``i < n_a ?
  ... : identity``, see :func:`over`).  One launch in place of one per norm, sum or
  minimum: an iteration's convergence test reads ten of them.

:func:`pack` gathers up to :data:`PACK_MAX` 0-d device values (float64, bool or int64;
a reduction's result as :class:`Column` s of its vector, no view made) into one float64
vector, so that :func:`~caspar_backend.arrays.xp.scalars` reads them with one launch and
one transfer.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .out_pool import OutputPool

THREADS = 256
#: stage 1 of a reduction uses at most this many blocks (stage 2 folds them in one)
MAX_PARTIALS = 256
MAX_ELEMENTWISE_BLOCKS = 8192
#: values :func:`pack` gathers in one launch
PACK_MAX = 24
#: columns of one :class:`Reductions` (its shared memory: 8 * THREADS bytes each; a
#: :class:`Column`'s offset travels to :func:`pack` in 4 bits)
MAX_COLUMNS = 16

_C_TYPES = {"vec": "const double* {}", "raw": "const double* {}",
            "idx": "const long long* {}", "scalar": "const double {}",
            "inout": "double* {}"}
_REDUCE = {"max": "CASPAR_MAX", "min": "CASPAR_MIN", "sum": "CASPAR_SUM"}
_OUT_TYPES = {"double": (np.float64, "double"), "bool": (np.bool_, "bool")}
_PACK_KINDS = {np.dtype(np.float64): 0, np.dtype(np.bool_): 1, np.dtype(np.int64): 2}

_PREAMBLE = r"""
#define CASPAR_INF __longlong_as_double(0x7ff0000000000000LL)
#define CASPAR_ISNAN(a) ((a) != (a))
#define CASPAR_FINITE(a) (fabs(a) < CASPAR_INF)
#define CASPAR_MAX(a, b) (((a) > (b) || CASPAR_ISNAN(a)) ? (a) : (b))
#define CASPAR_MIN(a, b) (((a) < (b) || CASPAR_ISNAN(a)) ? (a) : (b))
#define CASPAR_SUM(a, b) ((a) + (b))
#define CASPAR_TREE(OP, sh, acc)                                            \
    sh[threadIdx.x] = acc;                                                  \
    __syncthreads();                                                        \
    for (int caspar_w = blockDim.x / 2; caspar_w > 0; caspar_w >>= 1) {      \
        if (threadIdx.x < caspar_w)                                         \
            sh[threadIdx.x] = OP(sh[threadIdx.x], sh[threadIdx.x + caspar_w]); \
        __syncthreads();                                                    \
    }
"""

_PACK = r"""
extern "C" __global__ void caspar_pack(%s, const long long kinds, const long long offs_lo,
                                       const long long offs_hi, const int k,
                                       double* out) {
    const void* p[%d] = {%s};
    const int j = threadIdx.x;
    if (j >= k) return;
    const int kind = (int)((kinds >> (2 * j)) & 3);
    const int off = (int)(((j < 16 ? offs_lo >> (4 * j) : offs_hi >> (4 * (j - 16)))) & 15);
    out[j] = kind == 0 ? ((const double*)p[j])[off]
           : kind == 1 ? (double)((const bool*)p[j])[off]
           : (double)((const long long*)p[j])[off];
}
""" % (", ".join(f"const void* p{j}" for j in range(PACK_MAX)), PACK_MAX,
       ", ".join(f"p{j}" for j in range(PACK_MAX)))


class Column:
    """Final.  Entry ``index`` of a :class:`Reductions` launch's float64 result vector
    ``vec`` on the device, standing for the 0-d array ``vec[index]`` without making it: a
    CuPy view costs ~5 us of host time (H100, session 43) and an iteration reads ~40
    columns.  What the solver does with a reduction's value: gather it with others
    (:func:`pack`, by ``vec`` and ``index``), read it alone (``float``, ``bool``), or
    make the view (:meth:`view`)."""

    __slots__ = ("vec", "index")
    ndim = 0
    shape = ()
    size = 1
    dtype = np.dtype(np.float64)

    def __init__(self, vec, index: int):
        self.vec, self.index = vec, index

    def view(self):
        """The 0-d device array ``vec[index]``."""
        return self.vec[self.index, ...]

    def get(self):
        """The value on the host, a 0-d NumPy array (one transfer)."""
        return np.asarray(self.vec.get()[self.index])

    def __float__(self) -> float:
        return float(self.get())

    def __bool__(self) -> bool:
        return bool(self.get())

    def __repr__(self) -> str:
        return f"Column({self.index} of {self.vec.size})"


def _params(spec: str) -> list:
    """``"vec a, scalar mu"`` -> ``[("vec", "a"), ("scalar", "mu")]``."""
    out = []
    for p in spec.split(","):
        kind, name = p.split()
        if kind not in _C_TYPES:
            raise ValueError(f"unknown parameter kind {kind!r}")
        out.append((kind, name))
    return out


@dataclass(frozen=True)
class Elementwise:
    """Final.  ``params`` (see the module doc), ``body`` (C, index ``i``), ``size`` the
    parameter whose size is n -- or several, space-separated: then n is the largest of
    their sizes and the kernel takes each as ``n_<name>`` (before n) to guard its reads
    -- ``out`` the name of the new result vector ('' for none: the op writes its
    ``inout`` arguments)."""

    params: str
    body: str
    size: str
    out: str = ""

    def sizes(self) -> list:
        """The parameters whose sizes set n."""
        return self.size.split()

    def source(self, name: str) -> str:
        ps = [_C_TYPES[k].format(n) for k, n in _params(self.params)]
        if self.out:
            ps.append(f"double* {self.out}")
        if len(self.sizes()) > 1:
            ps += [f"const long long n_{n}" for n in self.sizes()]
        return (f'extern "C" __global__ void caspar_{name}({", ".join(ps)}, '
                "const long long n) {\n"
                "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                "i < n; i += (long long)blockDim.x * gridDim.x) {\n"
                f"        {self.body};\n    }}\n}}\n")


@dataclass(frozen=True)
class Reduction:
    """Final.  ``params`` (see the module doc; no ``inout``), ``map`` the value at ``i``
    (C), ``reduce`` one of max / min / sum, ``identity`` (C), ``out`` 'double' or
    'bool' (the result's type; a bool is the folded value != 0)."""

    params: str
    map: str
    reduce: str
    identity: str
    out: str = "double"

    def source(self, name: str) -> str:
        op = _REDUCE[self.reduce]
        ps = ", ".join(_C_TYPES[k].format(n) for k, n in _params(self.params))
        ctype = _OUT_TYPES[self.out][1]
        conv = "sh[0] != 0.0" if self.out == "bool" else "sh[0]"
        return (f'extern "C" __global__ void caspar_{name}({ps}, const long long n, '
                f"double* partial, unsigned int* count, {ctype}* out) {{\n"
                f"    __shared__ double sh[{THREADS}];\n"
                "    __shared__ bool last;\n"
                f"    double acc = {self.identity};\n"
                "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                "i < n; i += (long long)blockDim.x * gridDim.x) {\n"
                f"        const double caspar_v = {self.map};\n"
                f"        acc = {op}(acc, caspar_v);\n    }}\n"
                f"    CASPAR_TREE({op}, sh, acc)\n"
                "    if (threadIdx.x == 0) {\n"
                "        partial[blockIdx.x] = sh[0];\n"
                "        __threadfence();\n"
                "        last = atomicAdd(count, 1u) == gridDim.x - 1;\n    }\n"
                "    __syncthreads();\n"
                "    if (!last) return;\n"
                "    acc = threadIdx.x < gridDim.x ? ((volatile double*)partial)[threadIdx.x] : "
                f"{self.identity};\n"
                f"    CASPAR_TREE({op}, sh, acc)\n"
                "    if (threadIdx.x == 0) {\n"
                f"        out[0] = {conv};\n"
                "        *count = 0u;\n    }\n}\n")


def over(name: str, expr: str, identity: str) -> str:
    """A :class:`Reductions` column's map reading parameter ``name`` at ``i``:
    ``expr`` where ``i < n_name``, ``identity`` beyond its end."""
    return f"(i < n_{name} ? ({expr}) : ({identity}))"


@dataclass(frozen=True)
class Reductions:
    """Final.  ``params`` (see the module doc; no ``inout``) and ``columns``, a tuple of
    ``(map, reduce, identity)`` (C; reduce one of max / min / sum): out[c] is column c's
    fold of its map over ``i < n``, n the largest length of a ``vec`` or ``idx``
    parameter (each length passed as ``n_<name>``, in parameter order, before n)."""

    params: str
    columns: tuple

    def lengths(self) -> list:
        """The parameters whose lengths the kernel takes, in order."""
        return [n for k, n in _params(self.params) if k in ("vec", "idx")]

    def source(self, name: str) -> str:
        if not 0 < len(self.columns) <= MAX_COLUMNS:
            raise ValueError(f"{name}: 1 to {MAX_COLUMNS} columns")
        ps = ", ".join([_C_TYPES[k].format(n) for k, n in _params(self.params)]
                       + [f"const long long n_{n}" for n in self.lengths()])
        cols = list(enumerate(self.columns))
        acc = "".join(f"    double acc{c} = {ident};\n" for c, (_, _, ident) in cols)
        fold = "".join(f"        acc{c} = {_REDUCE[op]}(acc{c}, ({m}));\n"
                       for c, (m, op, _) in cols)
        trees = "".join(f"    CASPAR_TREE({_REDUCE[op]}, (sh + {c * THREADS}), acc{c})\n"
                        for c, (_, op, _) in cols)
        stage2 = "".join(f"    acc{c} = threadIdx.x < gridDim.x ? ((volatile double*)partial)"
                         f"[{c * MAX_PARTIALS} + threadIdx.x] : {ident};\n"
                         for c, (_, _, ident) in cols)
        k = len(cols)
        return (f'extern "C" __global__ void caspar_{name}({ps}, const long long n, '
                "double* partial, unsigned int* count, double* out) {\n"
                f"    __shared__ double sh[{k * THREADS}];\n"
                "    __shared__ bool last;\n" + acc +
                "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                "i < n; i += (long long)blockDim.x * gridDim.x) {\n" + fold + "    }\n"
                + trees +
                "    if (threadIdx.x == 0) {\n"
                f"        for (int c = 0; c < {k}; ++c)\n"
                f"            partial[c * {MAX_PARTIALS} + blockIdx.x] = sh[c * {THREADS}];\n"
                "        __threadfence();\n"
                "        last = atomicAdd(count, 1u) == gridDim.x - 1;\n    }\n"
                "    __syncthreads();\n"
                "    if (!last) return;\n" + stage2 + trees +
                "    if (threadIdx.x == 0) {\n"
                f"        for (int c = 0; c < {k}; ++c) out[c] = sh[c * {THREADS}];\n"
                "        *count = 0u;\n    }\n}\n")


def module_source(ops: dict) -> str:
    """The CUDA source of every op of ``ops`` (name -> spec) and of :func:`pack`."""
    return _PREAMBLE + "".join(spec.source(name) for name, spec in ops.items()) + _PACK


class _Module:
    """The compiled module of one op table for one array module (final, internal)."""

    def __init__(self, xp, ops: dict):
        self.xp, self.ops = xp, ops
        mod = xp.RawModule(code=module_source(ops))
        self.kernels = {}
        for name in ops:
            self.kernels[name] = mod.get_function(f"caspar_{name}")
        #: per stream: the reductions' partials and their done-counter (kernels on one
        #: stream run in order; the last block of a reduction sets the counter back to 0)
        self.scratch = {}
        #: the launches' result arrays, reused once nobody holds them (:mod:`.out_pool`)
        self.outputs = OutputPool(xp)
        self.pack = mod.get_function("caspar_pack")
        kinds = {name: [k for k, _ in _params(spec.params)] for name, spec in ops.items()}
        # per op, the argument positions a call visits (a launch's host work is what an
        # iteration's ~40 of them cost in Python: no pass over every argument)
        self.scalar_at = {name: tuple(j for j, k in enumerate(ks) if k == "scalar")
                          for name, ks in kinds.items()}
        self.array_at = {name: tuple(j for j, k in enumerate(ks) if k != "scalar")
                         for name, ks in kinds.items()}
        self.length_at = {name: tuple(j for j, k in enumerate(ks) if k in ("vec", "idx"))
                          for name, ks in kinds.items()}
        self.size_at = {name: tuple([p for _, p in _params(spec.params)].index(q)
                                    for q in spec.sizes())
                        for name, spec in ops.items() if isinstance(spec, Elementwise)}
        #: per op, its spec's class (a launch dispatches on it without isinstance)
        self.kind = {name: type(spec) for name, spec in ops.items()}

    def contiguous(self, name, args) -> bool:
        """Every array argument of op ``name`` C-contiguous (the kernels index raw
        pointers).  A plain loop: this runs at every launch, ~40 times per iteration."""
        for j in self.array_at[name]:
            if not _c_order(args[j]):
                return False
        return True

    def _args(self, name, args):
        at = self.scalar_at[name]
        if not at:
            return args
        a = list(args)
        for j in at:
            a[j] = np.float64(a[j])
        return tuple(a)

    def launch(self, name, args):
        """One launch of op ``name`` (``args`` a tuple, contiguous arrays)."""
        kind = self.kind[name]
        if kind is Reduction:
            return self._reduce(name, self.ops[name], args)
        if kind is Reductions:
            return self._reductions(name, self.ops[name], args)
        at = self.size_at[name]
        a = self._args(name, args)
        if len(at) == 1:
            n = args[at[0]].size
        else:
            sizes = tuple(np.int64(args[j].size) for j in at)
            n = int(max(sizes))
        out = None
        if self.ops[name].out:
            out = self.outputs.take((name, n), (n,), _F64)
            a = a + (out,)
        if len(at) > 1:
            a = a + sizes
        if n:
            blocks = min(-(-n // THREADS), MAX_ELEMENTWISE_BLOCKS)
            self.kernels[name]((blocks,), (THREADS,), a + (np.int64(n),))
        return out

    def _reduce(self, name, spec, args):
        n = args[0].size
        nb = max(1, min(-(-n // THREADS), MAX_PARTIALS))
        out = self.outputs.take(name, (), _OUT_TYPES[spec.out][0])
        self.kernels[name]((nb,), (THREADS,),
                           self._args(name, args) + (np.int64(n),) + self._scratch()
                           + (out,))
        return out

    def _reductions(self, name, spec, args):
        """A :class:`Reductions` launch; its columns as :class:`Column` entries of one
        (pooled) result vector."""
        ns = [args[j].size for j in self.length_at[name]]
        n = max(ns)
        sizes = tuple(map(np.int64, ns))
        nb = max(1, min(-(-n // THREADS), MAX_PARTIALS))
        out = self.outputs.take(name, (len(spec.columns),), _F64)
        self.kernels[name]((nb,), (THREADS,), self._args(name, args) + sizes
                           + (np.int64(n),) + self._scratch() + (out,))
        return tuple(Column(out, c) for c in range(len(spec.columns)))

    def _scratch(self):
        """This stream's partials (MAX_PARTIALS per column) and done-counter."""
        xp = self.xp
        stream = xp.cuda.get_current_stream().ptr
        scratch = self.scratch.get(stream)
        if scratch is None:
            scratch = self.scratch[stream] = (
                xp.empty(MAX_PARTIALS * MAX_COLUMNS, dtype=xp.float64),
                xp.zeros(1, dtype=xp.uint32))
        return scratch


_MODULES: dict = {}
_LOCK = threading.Lock()
_F64 = np.dtype(np.float64)


def module(xp, ops: dict) -> _Module:
    """The module of ``ops`` for ``xp`` (compiled once per process; CuPy keeps the
    binary in its kernel cache on disk)."""
    key = (id(xp), id(ops))
    m = _MODULES.get(key)
    if m is None:
        with _LOCK:
            m = _MODULES.get(key)
            if m is None:
                m = _MODULES[key] = _Module(xp, ops)
    return m


def _c_order(a) -> bool:
    # CuPy's own flag, read without building a ``flags`` object (a NumPy array has none)
    c = getattr(a, "_c_contiguous", None)
    return a.flags.c_contiguous if c is None else c


def pack(xp, ops: dict, values):
    """The 0-d device arrays and :class:`Column` values ``values`` (at most
    :data:`PACK_MAX`, dtypes float64, bool or int64) as one float64 device vector, in one
    launch (none when they are the columns of one reduction in order: its result vector
    is returned); None when a value has another dtype (the caller stacks them instead)."""
    k = len(values)
    first = values[0] if k else None
    if type(first) is Column and first.index == 0 and first.vec.size == k \
            and all(type(v) is Column and v.vec is first.vec and v.index == j
                    for j, v in enumerate(values)):
        return first.vec
    kinds = offs = 0
    ptrs = []
    for j, v in enumerate(values):
        code = _PACK_KINDS.get(v.dtype)
        if code is None:
            return None
        kinds |= code << (2 * j)
        if type(v) is Column:
            offs |= v.index << (4 * j)
            ptrs.append(v.vec)
        else:
            ptrs.append(v)
    m = module(xp, ops)
    out = m.outputs.take(("pack", k), (k,), _F64)
    ptrs = tuple(ptrs) + (out,) * (PACK_MAX - k)
    m.pack((1,), (32,), ptrs + (np.int64(kinds), np.int64(_signed64(offs & _MASK64)),
                                np.int64(offs >> 64), np.int32(k), out))
    return out


_MASK64 = 2 ** 64 - 1


def _signed64(v: int) -> int:
    """The unsigned 64-bit ``v`` as the int64 of the same bits (the kernel masks the
    4-bit fields it shifts out)."""
    return v - 2 ** 64 if v >= 2 ** 63 else v
