"""The cuDSS wrapper (caspar_backend.linsolve.cudss_handle and .cudss) against fakes.

CPU-run tests replace ``nvmath.bindings.cudss`` by :class:`FakeCudss`, which records
every call and emulates the numerics on the memory the pointers point to (a dense
eigen-decomposition for INERTIA, ``numpy.linalg.solve`` for SOLVE), and CuPy by a NumPy
stand-in whose arrays have ``.data.ptr``: the version gate, the order of the calls and
their arguments, the in-place value updates, the inertia read back and the teardown.
One GPU test (``@pytest.mark.gpu``) checks the real library's pivoting and inertia.
"""

from __future__ import annotations

import ctypes
import enum
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from caspar_backend.errors import DeviceError
from caspar_backend.linsolve import SparseStructure, cudss_handle
from caspar_backend.linsolve import cudss as cudss_mod

try:
    import tomllib
except ImportError:          # Python 3.10
    tomllib = None


# ---------------------------------------------------------------------- fake bindings
class FakeCudss:
    """``nvmath.bindings.cudss`` stand-in: records calls as ``(name, args)``."""

    class ConfigParam(enum.IntEnum):
        REORDERING_ALG = 0
        PIVOT_TYPE = 3
        HYBRID_MEMORY_MODE = 11
        USE_CUDA_REGISTER_MEMORY = 14
        ND_NLEVELS = 18

    class DataParam(enum.IntEnum):
        INFO = 0
        PERM_REORDER_ROW = 4
        INERTIA = 5
        USER_PERM = 9
        USER_ND_PARTITION_TREE = 23
        ND_PARTITION_TREE = 24

    class PivotType(enum.IntEnum):
        PIVOT_NONE = 5
        PIVOT_BUNCH_KAUFMAN = 6

    class Phase(enum.IntEnum):
        ANALYSIS = 3
        FACTORIZATION = 4
        SOLVE = 1008

    class MatrixType(enum.IntEnum):
        SYMMETRIC = 1

    class MatrixViewType(enum.IntEnum):
        LOWER = 1

    class IndexBase(enum.IntEnum):
        ZERO = 0

    class Layout(enum.IntEnum):
        COL_MAJOR = 0

    DTYPES = {10: np.int32, 1: np.float64}

    def __init__(self, version=(1, 0, 0), fail=()):
        self.version = version
        self.fail = set(fail)
        self.calls = []
        self.config = {}
        self.matrices = {}
        self.alive = set()
        self._next = 100
        self.info = 0
        self.inertia = (0, 0)
        self.dense = None
        self.user = {}            # DataParam -> the int32 array last given by data_set
        self._user_of = {}        # data object -> {DataParam: array}
        self.tree = np.arange(7, dtype=np.int32)   # the ND tree a reordering reports
        self.reorderings = 0      # ANALYSIS phases that reordered (no USER_PERM given)

    def _call(self, name, *args):
        self.calls.append((name, args))
        if name in self.fail:
            raise RuntimeError(f"fake {name} failure")

    def _new(self, kind):
        self._next += 1
        self.alive.add((kind, self._next))
        return self._next

    def _kill(self, kind, obj):
        assert (kind, obj) in self.alive, (kind, obj)
        self.alive.remove((kind, obj))

    @staticmethod
    def _read(ptr, count, dtype):
        nbytes = count * np.dtype(dtype).itemsize
        return np.frombuffer(ctypes.string_at(ptr, nbytes), dtype=dtype).copy()

    # library
    def get_property(self, i):
        return self.version[i]

    def get_config_param_dtype(self, param):
        return np.int32

    def get_data_param_dtype(self, param):
        return np.int32

    # objects
    def create(self):
        self._call("create")
        return self._new("handle")

    def config_create(self):
        self._call("config_create")
        return self._new("config")

    def data_create(self, handle):
        self._call("data_create", handle)
        return self._new("data")

    def set_threading_layer(self, handle, path):
        self._call("set_threading_layer", handle, path)

    def set_async_workspace_allocator(self, handle, pool):
        self._call("set_async_workspace_allocator", handle, pool)
        return True

    def config_set(self, config, param, ptr, nbytes):
        dt = np.dtype(self.get_config_param_dtype(param))
        assert nbytes == dt.itemsize
        value = int(self._read(ptr, 1, dt)[0])
        self.config[self.ConfigParam(param)] = value
        self._call("config_set", config, self.ConfigParam(param), value)

    def matrix_create_csr(self, *args):
        self._call("matrix_create_csr", *args)
        m = self._new("matrix")
        self.matrices[m] = ("csr", args)
        return m

    def matrix_create_dn(self, *args):
        self._call("matrix_create_dn", *args)
        m = self._new("matrix")
        self.matrices[m] = ("dn", args)
        return m

    def set_stream(self, handle, stream):
        self._call("set_stream", handle, stream)

    def execute(self, handle, phase, config, data, a, x, b):
        self._call("execute", handle, self.Phase(phase), config, data, a, x, b)
        if phase == self.Phase.ANALYSIS:
            n = self.matrices[a][1][0]
            user = self._user_of.get(data, {})
            given = user.get(self.DataParam.USER_PERM)
            self.reorderings += given is None
            self.perm = given if given is not None else np.arange(n)[::-1].astype(np.int32)
            self.tree_out = user.get(self.DataParam.USER_ND_PARTITION_TREE, self.tree)
        elif phase == self.Phase.FACTORIZATION:
            self._factorize(self.matrices[a][1])
        elif phase == self.Phase.SOLVE:
            (n, _, _, bp, _, _), (_, _, _, xp, _, _) = (self.matrices[b][1],
                                                         self.matrices[x][1])
            sol = np.linalg.solve(self.dense, self._read(bp, n, np.float64))
            ctypes.memmove(xp, sol.ctypes.data, sol.nbytes)

    def _factorize(self, args):
        n, _, nnz, rp, re, cp_, vp, ot, it, vt, mtype, mview, base = args
        assert (re, mtype, mview, base) == (0, self.MatrixType.SYMMETRIC,
                                           self.MatrixViewType.LOWER, self.IndexBase.ZERO)
        ptr = self._read(rp, n + 1, self.DTYPES[ot])
        col = self._read(cp_, nnz, self.DTYPES[it])
        val = self._read(vp, nnz, self.DTYPES[vt])
        low = np.zeros((n, n))
        for i in range(n):
            for k in range(ptr[i], ptr[i + 1]):
                assert col[k] <= i          # the LOWER view
                low[i, col[k]] = val[k]
        self.dense = low + low.T - np.diag(np.diag(low))
        ev = np.linalg.eigvalsh(self.dense)
        self.info = 0
        self.inertia = (int((ev > 1e-12).sum()), int((ev < -1e-12).sum()))

    def data_set(self, handle, data, param, ptr, nbytes):
        self._call("data_set", handle, data, self.DataParam(param), nbytes)
        value = self._read(ptr, nbytes // 4, np.int32)
        self.user[self.DataParam(param)] = value
        self._user_of.setdefault(data, {})[self.DataParam(param)] = value

    def data_get(self, handle, data, param, ptr, nbytes, written):
        self._call("data_get", handle, data, self.DataParam(param), nbytes)
        D = self.DataParam
        if param in (D.PERM_REORDER_ROW, D.ND_PARTITION_TREE):
            src = self.perm if param == D.PERM_REORDER_ROW else self.tree_out
            if ptr == 0 and nbytes == 0:            # the size query
                ctypes.memmove(written, np.array([src.nbytes], np.uint64).ctypes.data, 8)
                return
            # cuDSS 1.0 takes exactly the size (a larger buffer: INVALID_VALUE)
            assert nbytes == src.nbytes, "not the array's size"
        else:
            src = np.array([self.info] if param == D.INFO else self.inertia,
                           dtype=np.int32)
            assert nbytes == src.nbytes
        ctypes.memmove(ptr, src.ctypes.data, src.nbytes)
        ctypes.memmove(written, np.array([src.nbytes], np.uint64).ctypes.data, 8)

    def matrix_destroy(self, m):
        self._call("matrix_destroy", m)
        self._kill("matrix", m)

    def data_destroy(self, handle, data):
        self._call("data_destroy", handle, data)
        self._kill("data", data)

    def config_destroy(self, config):
        self._call("config_destroy", config)
        self._kill("config", config)

    def destroy(self, handle):
        self._call("destroy", handle)
        self._kill("handle", handle)

    def names(self):
        return [c[0] for c in self.calls]


@pytest.fixture
def fake(monkeypatch):
    f = FakeCudss()
    monkeypatch.setattr(cudss_handle, "_CUDSS", f)
    return f


# ------------------------------------------------------------------ fake device arrays
class _Dev(np.ndarray):
    """A host array that answers ``.data.ptr`` as a CuPy array does."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


def _dev(a, dtype=None):
    return np.ascontiguousarray(a, dtype=dtype).view(_Dev)


def _fake_cupy():
    class Stream:
        ptr = 4242
        syncs = 0

        def synchronize(self):
            Stream.syncs += 1

    stream = Stream()

    class Module:
        def __init__(self, code):
            pass

        def get_function(self, name):
            def matvec(grid, block, args):
                ptr, col, src, val, x, out, n = args
                for i in range(int(n)):
                    ks = range(int(ptr[i]), int(ptr[i + 1]))
                    out[i] = sum(val[src[k]] * x[col[k]] for k in ks)
            return matvec

    class FakeCp:
        def __getattr__(self, name):
            return getattr(np, name)

        def asarray(self, a, dtype=None):
            return _dev(a, dtype)

        def zeros(self, shape, dtype=np.float64):
            return _dev(np.zeros(shape, dtype))

        def empty(self, shape, dtype=np.float64):
            return _dev(np.empty(shape, dtype))

    pools = {777: {4: 0}}          # pool -> {attribute: value}

    def set_attribute(pool, attr, value):
        pools[pool][attr] = value

    cp = FakeCp()
    cp.RawModule = Module
    cp.cuda = types.SimpleNamespace(
        get_current_stream=lambda: stream, Device=lambda: types.SimpleNamespace(id=0),
        runtime=types.SimpleNamespace(
            deviceGetMemPool=lambda dev: 777,
            memPoolGetAttribute=lambda pool, attr: pools[pool][attr],
            memPoolSetAttribute=set_attribute))
    cp.pools = pools
    return cp, Stream


@pytest.fixture
def fake_cupy(monkeypatch):
    import caspar_backend.arrays.raw_kernels as raw_kernels

    cp, stream = _fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(raw_kernels, "_LOADED", {})       # no fake kernel in the real cache
    return cp, stream


def _handle(pivoting=False, hybrid=False, threading_lib=None, pool=None, n=3):
    indptr = _dev(np.arange(n + 1), np.int32)             # a diagonal matrix
    indices = _dev(np.arange(n), np.int32)
    values = _dev(np.ones(n))
    b, x = _dev(np.zeros(n)), _dev(np.zeros(n))
    h = cudss_handle.CudssHandle(indptr, indices, values, b, x, pivoting=pivoting,
                                 hybrid_memory=hybrid, threading_lib=threading_lib,
                                 workspace_pool=pool)
    return h, (indptr, indices, values, b, x)


# ------------------------------------------------------------------------ version gate
@pytest.mark.parametrize("version, pivoting", [
    ((0, 8, 0), False), ((0, 8, 93), False), ((1, 0, 0), True), ((1, 3, 2), True)])
def test_supported_versions(monkeypatch, version, pivoting):
    monkeypatch.setattr(cudss_handle, "_CUDSS", FakeCudss(version))
    assert cudss_handle.cudss_version() == version
    assert cudss_mod._import_nvmath() == version
    assert cudss_mod.cudss_problem() is None
    assert cudss_handle.pivots(version) is pivoting


@pytest.mark.parametrize("version", [(0, 7, 1), (0, 9, 0), (2, 0, 0)])
def test_unsupported_versions_are_clear_errors(monkeypatch, version):
    monkeypatch.setattr(cudss_handle, "_CUDSS", FakeCudss(version))
    found = ".".join(map(str, version))
    with pytest.raises(DeviceError, match=rf"version {found}.*0\.8\.x or 1\.x.*"
                                          r"caspar-backend\[gpu-cuda1"):
        cudss_mod._import_nvmath()
    why = cudss_mod.cudss_problem()
    assert found in why and "0.8.x or 1.x" in why


def test_missing_bindings_are_a_clear_error(monkeypatch):
    monkeypatch.setattr(cudss_handle, "_CUDSS", None)
    monkeypatch.setitem(sys.modules, "nvmath", None)        # import nvmath fails
    with pytest.raises(DeviceError, match=r"needs nvmath-python and cuDSS.*gpu-cuda1"):
        cudss_mod._import_nvmath()


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_extras_pin_the_cudss_that_nvmath_can_load():
    """pyproject's cuDSS pins are the 1.x release (Bunch-Kaufman pivoting) together with a
    cuda-pathfinder that finds it: nvmath-python loads cuDSS through cuda-pathfinder, whose
    catalog has ``libcudss.so.1`` from 1.9 on (before, ``libcudss.so.0`` only, and a
    pip-installed 1.x would not load).  :data:`SUPPORTED_CUDSS` still admits 0.8."""
    assert (0, 8) in cudss_handle.SUPPORTED_CUDSS and (1, None) in cudss_handle.SUPPORTED_CUDSS
    assert cudss_handle.pivots((1, 0, 0)) and not cudss_handle.pivots((0, 8, 0))
    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra, wheel in (("gpu-cuda12", "nvidia-cudss-cu12"),
                         ("gpu-cuda13", "nvidia-cudss-cu13")):
        assert f"{wheel}>=1.0,<2" in extras[extra], extras[extra]
        assert "cuda-pathfinder>=1.9,<2" in extras[extra], extras[extra]


# ---------------------------------------------------------------------- the handle
def _config_sets(fake):
    return [(a[1], a[2]) for n, a in fake.calls if n == "config_set"]


def test_bunch_kaufman_is_set_before_analysis_from_cudss_1(fake):
    h, _ = _handle(pivoting=True)
    h.analyse(7)
    names = fake.names()
    assert (fake.ConfigParam.PIVOT_TYPE, 6) in _config_sets(fake)
    i_pivot = next(i for i, (n, a) in enumerate(fake.calls)
                   if n == "config_set" and a[1] == fake.ConfigParam.PIVOT_TYPE)
    assert i_pivot < names.index("execute")
    assert fake.calls[names.index("execute")][1][1] == fake.Phase.ANALYSIS


def test_no_pivot_type_without_pivoting(fake):
    h, _ = _handle(pivoting=False)
    h.analyse(7)
    assert fake.ConfigParam.PIVOT_TYPE not in fake.config
    # as nvmath-python's DirectSolver: device memory mode, registered host memory
    assert _config_sets(fake) == [(fake.ConfigParam.HYBRID_MEMORY_MODE, 0),
                                  (fake.ConfigParam.USE_CUDA_REGISTER_MEMORY, 1),
                                  (fake.ConfigParam.ND_NLEVELS, 12)]


def test_nested_dissection_levels_by_order():
    # the table's rows ascend and end with the catch-all; the measured sizes' choices
    bounds = [b for b, _ in cudss_handle.ND_LEVELS]
    assert bounds[-1] is None and bounds[:-1] == sorted(bounds[:-1])
    assert [cudss_handle.nd_levels(n) for n in (12_535, 264_541, 621_978, 2_091_250)] \
        == [12, 12, 12, 14]


def test_nested_dissection_levels_skipped_without_the_parameter(fake, monkeypatch):
    # bindings of a cuDSS without CUDSS_CONFIG_ND_NLEVELS: nothing set, no error
    class Params(enum.IntEnum):
        PIVOT_TYPE = 3
        HYBRID_MEMORY_MODE = 11
        USE_CUDA_REGISTER_MEMORY = 14
    monkeypatch.setattr(fake, "ConfigParam", Params)
    h, _ = _handle(pivoting=False)
    h.analyse(7)
    assert [p for p, _ in _config_sets(fake)] == [Params.HYBRID_MEMORY_MODE,
                                                   Params.USE_CUDA_REGISTER_MEMORY]


def test_hybrid_memory_mode(fake):
    _handle(hybrid=True)
    assert fake.config[fake.ConfigParam.HYBRID_MEMORY_MODE] == 1


def _objects(fake):
    """(handle, config, data) alive in the fake, and its matrices A, b, x."""
    hd, cfg, dat = (next(k for kind, k in fake.alive if kind == w)
                    for w in ("handle", "config", "data"))
    return (hd, cfg, dat), tuple(sorted(fake.matrices))


def test_matrices_and_phases_in_order_with_nvmath_argument_order(fake):
    h, (indptr, indices, values, b, x) = _handle(pivoting=True, threading_lib="/x/mt.so",
                                                 pool=555)
    h.analyse(11)
    h.factorize(12)
    h.solve(13)
    (hd, cfg, dat), (a_m, b_m, x_m) = _objects(fake)
    calls = fake.calls
    assert calls[:3] == [("create", ()), ("config_create", ()), ("data_create", (hd,))]
    assert ("set_threading_layer", (hd, "/x/mt.so")) in calls
    assert ("set_async_workspace_allocator", (hd, 555)) in calls
    csr = next(a for n, a in calls if n == "matrix_create_csr")
    S, L, Z = fake.MatrixType.SYMMETRIC, fake.MatrixViewType.LOWER, fake.IndexBase.ZERO
    assert csr == (3, 3, 3, indptr.ctypes.data, 0, indices.ctypes.data,
                   values.ctypes.data, 10, 10, 1, S, L, Z)
    dns = [a for n, a in calls if n == "matrix_create_dn"]
    assert dns == [(3, 1, 3, b.ctypes.data, 1, fake.Layout.COL_MAJOR),
                   (3, 1, 3, x.ctypes.data, 1, fake.Layout.COL_MAJOR)]
    P = fake.Phase
    runs = [(n, a) for n, a in calls if n in ("set_stream", "execute")]
    # execute(handle, phase, config, data, A, x, b): the solution before the rhs
    assert runs == [r for stream, phase in ((11, P.ANALYSIS), (12, P.FACTORIZATION),
                                            (13, P.SOLVE))
                    for r in (("set_stream", (hd, stream)),
                              ("execute", (hd, phase, cfg, dat, a_m, x_m, b_m)))]


def test_call_sequence_table_names_every_call(fake):
    h, _ = _handle(pivoting=True, hybrid=True, threading_lib="/x/mt.so", pool=1)
    h.analyse(0)
    h.factorize(0)
    h.info_inertia()
    h.solve(0)
    h.free()
    listed = " ".join(cudss_handle.CALL_SEQUENCE)
    assert all(f"{name}(" in listed for name in set(fake.names()))


def test_info_and_inertia_read_back(fake):
    h, _ = _handle()
    fake.info, fake.inertia = 0, (2, 1)
    assert h.info_inertia() == (0, 2, 1)
    gets = [a for n, a in fake.calls if n == "data_get"]
    assert [(g[2], g[3]) for g in gets] == [(fake.DataParam.INERTIA, 8),
                                          (fake.DataParam.INFO, 4)]
    fake.info = 3
    assert h.info_inertia()[0] == 3


def _gets(fake):
    return [a[2] for n, a in fake.calls if n == "data_get"]


def test_info_is_read_only_where_the_inertia_misses_pivots(fake):
    """Given the order, a complete inertia (no zero pivot, the one thing INFO reports)
    is one read; an incomplete one reads INFO too and returns it."""
    h, _ = _handle()
    fake.info, fake.inertia = 0, (2, 1)
    fake.calls.clear()
    assert h.info_inertia(3) == (0, 2, 1)
    assert _gets(fake) == [fake.DataParam.INERTIA]
    fake.info, fake.inertia = 3, (1, 1)          # a zero pivot at row 3
    fake.calls.clear()
    assert h.info_inertia(3) == (3, 1, 1)
    assert _gets(fake) == [fake.DataParam.INERTIA, fake.DataParam.INFO]
    f = cudss_mod._factorization(*h.info_inertia(3), 3)
    assert not f.ok and f.inertia == (0, 0, 3)


def test_factorization_from_info_and_inertia():
    F = cudss_mod._factorization
    assert F(0, 2, 1, 3).ok and F(0, 2, 1, 3).inertia == (2, 1, 0)
    f = F(0, 1, 1, 3)
    assert not f.ok and f.inertia == (1, 1, 1)
    f = F(2, 2, 1, 3)                         # info != 0: singular, inertia unknown
    assert not f.ok and f.inertia == (0, 0, 3)


def test_free_is_idempotent_and_destroys_in_reverse_order(fake):
    h, _ = _handle(threading_lib="/x/mt.so")
    (hd, cfg, dat), (a_m, b_m, x_m) = _objects(fake)
    n0 = len(fake.calls)
    h.free()
    assert fake.calls[n0:] == [("matrix_destroy", (x_m,)), ("matrix_destroy", (b_m,)),
                               ("matrix_destroy", (a_m,)), ("data_destroy", (hd, dat)),
                               ("config_destroy", (cfg,)), ("destroy", (hd,))]
    assert not fake.alive
    h.free()
    h.__del__()
    assert len(fake.calls) == n0 + 6


def test_threading_layer_failure_is_ignored(fake):
    fake.fail = {"set_threading_layer", "set_async_workspace_allocator"}
    h, _ = _handle(threading_lib="/x/mt.so", pool=1)
    assert h.threading_lib is None
    h.analyse(0)
    h.free()
    assert not fake.alive


def test_failed_construction_releases_what_it_created(fake):
    fake.fail = {"matrix_create_dn"}
    with pytest.raises(RuntimeError, match="matrix_create_dn"):
        _handle()
    assert not fake.alive


# ------------------------------------------------------------- CudssSolver on fakes
def _upper_csc(K):
    """Upper triangle of a dense symmetric K in CSC, every entry of it stored."""
    n = K.shape[0]
    rows = [i for j in range(n) for i in range(j + 1)]
    indptr = np.r_[0, np.cumsum(np.arange(1, n + 1))]
    vals = np.array([K[i, j] for j in range(n) for i in range(j + 1)])
    return SparseStructure(n, indptr.astype(np.int64), np.array(rows, np.int64)), vals


@pytest.mark.parametrize("version", [(0, 8, 0), (1, 0, 0)])
def test_solver_updates_values_in_place_and_solves(fake, fake_cupy, version):
    fake.version = version
    cp, stream = fake_cupy
    s = cudss_mod.CudssSolver()
    assert s.pivoting == (version[0] >= 1) and s.version == version
    K1 = np.array([[0.0, 1, 1], [1, 0, 1], [1, 1, -1e-12]])
    K2 = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])
    st, v1 = _upper_csc(K1)
    _, v2 = _upper_csc(K2)
    s.analyse(st)
    f = s.factorize(cp.asarray(v1))
    assert f.ok and f.inertia == (1, 2, 0)
    assert s.planned and s.plan_seconds >= 0.0
    b1, b2 = np.array([1.0, 2, 3]), np.array([-1.0, 0, 5])
    x1 = s.solve(cp.asarray(b1))
    x2 = s.solve(cp.asarray(b2))
    np.testing.assert_allclose(K1 @ x1, b1, atol=1e-9)     # not overwritten by x2
    np.testing.assert_allclose(K1 @ x2, b2, atol=1e-9)
    np.testing.assert_allclose(s.matvec(cp.asarray(x1)), K1 @ x1, atol=1e-12)
    f = s.factorize(cp.asarray(v2))                  # same arrays, new values
    assert f.ok and f.inertia == (3, 0, 0)
    out = cp.zeros(3)
    assert s.solve(cp.asarray(b1), out=out) is out
    np.testing.assert_allclose(K2 @ out, b1, atol=1e-12)
    phases = [a[1] for n, a in fake.calls if n == "execute"]
    P = fake.Phase
    assert phases == [P.ANALYSIS, P.FACTORIZATION, P.SOLVE, P.SOLVE,
                      P.FACTORIZATION, P.SOLVE]
    assert all(a[1] == 4242 for n, a in fake.calls if n == "set_stream")
    assert ("set_async_workspace_allocator", (s._handle._handle, 777)) in fake.calls
    assert cp.pools[777][4] == 2 ** 64 - 1        # the pool keeps its memory
    assert (fake.ConfigParam.PIVOT_TYPE in fake.config) == s.pivoting
    s.free()
    s.free()
    assert not fake.alive


def test_solver_rejects_unsupported_cudss(fake, fake_cupy):
    fake.version = (0, 7, 0)
    with pytest.raises(DeviceError, match="0.7.0"):
        cudss_mod.CudssSolver()


# -------------------------------------------------------------- threading layer path
def test_mtlayer_path_prefers_the_loaded_major(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDSS_THREADING_LIB", raising=False)
    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert cudss_mod._mtlayer_path(1) is None
    (lib / "libcudss_mtlayer_gomp.so.0").write_text("")
    assert cudss_mod._mtlayer_path(1).endswith(".so.0")       # the only one there
    (lib / "libcudss_mtlayer_gomp.so.1").write_text("")
    assert cudss_mod._mtlayer_path(1).endswith(".so.1")
    assert cudss_mod._mtlayer_path(0).endswith(".so.0")
    monkeypatch.setenv("CUDSS_THREADING_LIB", str(tmp_path / "missing.so"))
    assert cudss_mod._mtlayer_path(1) is None


# ------------------------------------------------------------------ the real library
def _expected_inertia(K):
    ev = np.linalg.eigvalsh(K)
    tol = 1e-9 * np.abs(ev).max()
    pos, neg = int((ev > tol).sum()), int((ev < -tol).sum())
    return pos, neg, K.shape[0] - pos - neg


@pytest.mark.gpu
def test_real_cudss_pivoting_and_inertia():
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)
    import cupy as cp

    s = cudss_mod.CudssSolver()
    assert s.pivoting == (cudss_handle.cudss_version()[0] >= 1)
    if not s.pivoting:
        pytest.skip("cuDSS 0.8 pivots only statically: inertia of these is not exact")
    singular = np.array([[0.0, 0, 4], [0, 0, -3], [4, -3, 0]])
    regular = np.array([[0.0, 1, 1], [1, 0, 1], [1, 1, -1e-12]])
    st, vs = _upper_csc(singular)
    _, vr = _upper_csc(regular)
    s.analyse(st)
    f = s.factorize(cp.asarray(vs))
    raw = s._handle.info_inertia()
    # eigenvalues 5, -5 and an exact 0: seen on the H200 with cuDSS 1.0.0, Bunch-Kaufman
    # keeps the two nonzero signs and perturbs the zero pivot (info 0, inertia (2, 1)) -
    # the sign of that pivot is rounding, so only the nonzero eigenvalues are checked
    # (a singular KKT that passes the inertia test is caught by the refinement's residual)
    assert _expected_inertia(singular) == (1, 1, 1)
    assert f.n_pos >= 1 and f.n_neg >= 1 and f.n_pos + f.n_neg + f.n_zero == 3, raw
    f = s.factorize(cp.asarray(vr))
    raw = s._handle.info_inertia()
    assert f.ok and f.inertia == _expected_inertia(regular) == (1, 2, 0), raw
    b = np.array([1.0, -2.0, 0.5])
    x = cp.asnumpy(s.solve(cp.asarray(b)))
    np.testing.assert_allclose(regular @ x, b, atol=1e-8)
    s.free()


@pytest.mark.gpu
def test_real_cudss_dense_eigen_switch_of_a_small_system():
    """A small system switches to the dense eigendecomposition on the device, with cuDSS
    0.8 (static pivots) and 1.x (Bunch-Kaufman, which still perturbs an exact zero pivot)
    alike: diag(0, 2, -3) reports its zero eigenvalue (an exact zero; rounding would
    leave a singular K's at ~eps ||K||, for the refinement to catch), diag(1e-20, 1e3)
    keeps its 1e-20 pivot (cuDSS replaces it), the regular one solves to rounding; the
    vectors stay CuPy arrays.  A system above DENSE_MAX_N is not switched."""
    from caspar_backend.device import gpu_problem
    from caspar_backend.linsolve.dense_eigen import DENSE_MAX_N

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)
    import cupy as cp

    s = cudss_mod.CudssSolver()
    singular = np.diag([0.0, 2.0, -3.0])
    regular = np.array([[0.0, 1, 1], [1, 0, 1], [1, 1, -1e-12]])
    st, vs = _upper_csc(singular)
    _, vr = _upper_csc(regular)
    s.analyse(st)
    assert s.perturbs_pivots
    assert s.enable_pivoting() and not s.perturbs_pivots and not s.enable_pivoting()
    f = s.factorize(cp.asarray(vs))
    assert not f.ok and f.inertia == (1, 1, 1)
    f = s.factorize(cp.asarray(vr))
    assert f.ok and f.inertia == (1, 2, 0)
    b = cp.asarray([1.0, -2.0, 0.5])
    x = s.solve(b)
    assert isinstance(x, cp.ndarray)
    np.testing.assert_allclose(regular @ cp.asnumpy(x), cp.asnumpy(b), atol=1e-12)
    np.testing.assert_allclose(cp.asnumpy(s.matvec(x)), regular @ cp.asnumpy(x), atol=1e-14)
    st2, v2 = _upper_csc(np.diag([1e-20, 1e3]))
    s.analyse(st2)
    assert s.enable_pivoting()
    f = s.factorize(cp.asarray(v2))
    assert f.ok and f.inertia == (2, 0, 0)
    np.testing.assert_allclose(cp.asnumpy(s.solve(cp.asarray([1.0, 1.0]))), [1e20, 1e-3],
                               rtol=1e-14)
    big = np.eye(DENSE_MAX_N + 1)
    st3, _ = _upper_csc(big)
    s.analyse(st3)
    assert not s.enable_pivoting() and s.perturbs_pivots
    s.free()


def test_shared_analysis_is_lent_to_the_next_solver(fake, fake_cupy):
    """The solves of one structure analyse once: a released solver's analysed plan is
    the next solver's (no ANALYSIS phase, same handle), one idle plan is kept, a second
    concurrent solver makes and analyses its own, and a plan never analysed is freed."""
    fake.version = (1, 0, 0)
    cp, _ = fake_cupy
    K = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])
    st, v = _upper_csc(K)
    sym = cudss_mod.CudssSolver().symbolic(st)
    P = fake.Phase

    def analyses():
        return sum(1 for n, a in fake.calls if n == "execute" and a[1] == P.ANALYSIS)

    s1 = cudss_mod.CudssSolver()
    s1.analyse(st, sym)
    s1.factorize(cp.asarray(v))
    h1 = s1._handle
    assert analyses() == 1 and s1.plan_seconds >= 0.0
    s1.release()
    s2 = cudss_mod.CudssSolver()
    s2.analyse(st, sym)
    assert s2._handle is h1 and s2.planned
    f = s2.factorize(cp.asarray(2 * v))
    assert f.ok and f.inertia == (3, 0, 0) and analyses() == 1 and s2.plan_seconds == 0.0
    np.testing.assert_allclose(2 * K @ s2.solve(cp.asarray([1.0, 2, 3])), [1, 2, 3])
    s3 = cudss_mod.CudssSolver()          # concurrent with s2: its own plan
    s3.analyse(st, sym)
    assert s3._handle is not h1 and not s3.planned
    s3.factorize(cp.asarray(v))
    assert analyses() == 2
    h3 = s3._handle
    s2.release()
    s3.release()                          # beyond MAX_IDLE: freed
    assert h3._handle is None and h1._handle is not None
    s4 = cudss_mod.CudssSolver()
    s4.analyse(st, sym)                   # borrowed and given back unused: still analysed
    assert s4._handle is h1
    s4.release()
    s5 = cudss_mod.CudssSolver(hybrid_memory=True)
    s5.analyse(st, sym)                   # other settings: not lent the idle plan
    h5 = s5._handle
    assert h5 is not h1
    s5.release()                          # never analysed: freed, not kept
    assert h5._handle is None
    assert len(sym._idle) == 1 and sym._idle[0].handle is h1
