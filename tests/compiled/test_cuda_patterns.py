"""When solve_batch's GPU launch takes a pattern's kernel (compiled/cuda/patterns.py,
group.pattern_dispatcher), checked without a GPU: on unless CASPAR_CUDA_PATTERNS=0;
ready -> that kernel; not ready -> its build in a detached process (once per process and
pattern, under a lock), or in this process with CASPAR_BACKGROUND_COMPILE=0; the
background process's command line."""
import pickle
import subprocess
import weakref

import pytest

from caspar_backend.compiled.cuda import cache, group, patterns


@pytest.fixture
def lay():
    pytest.importorskip("casadi")
    from tests.compiled.test_cuda_straight import _layout

    return _layout("ik")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "1")
    monkeypatch.delenv("CASPAR_BACKGROUND_COMPILE", raising=False)
    monkeypatch.setattr(cache, "compute_capability", lambda: "90")
    monkeypatch.setattr(patterns, "_started", set())
    monkeypatch.setattr(patterns, "_dispatchers", {})
    calls = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kw: calls.append(args))
    monkeypatch.setattr(patterns, "kernel_for", lambda lay, cc: ("kernel", cc))
    return calls


def test_on_by_default(monkeypatch):
    monkeypatch.delenv("CASPAR_CUDA_PATTERNS", raising=False)
    assert patterns.enabled() is patterns.DEFAULT_ON is True
    monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "0")
    assert not patterns.enabled()
    monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "1")
    assert patterns.enabled()


def test_off_means_the_default_kernel(lay, env, monkeypatch):
    monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "0")
    assert group.pattern_dispatcher(lay) is None and not env


def test_not_ready_starts_one_background_build(lay, env):
    assert group.pattern_dispatcher(lay) is None
    assert group.pattern_dispatcher(lay) is None           # once per process
    (args,) = env
    i = args.index("--cuda-pattern")
    with open(args[i + 1], "rb") as f:
        assert pickle.load(f).sizes == lay.sizes
    # (no extern kernel in the cache yet: the machine's one lock for it)
    assert args[args.index("--lock") + 1].endswith("building-extern-sm90")


def test_a_fresh_lock_of_another_process_is_respected(lay, env, monkeypatch):
    patterns.kernel_path((9, 0)).parent.mkdir(parents=True)
    patterns.kernel_path((9, 0)).write_bytes(b"x")        # the extern kernel is built
    lock = cache.cuda_cache_dir() / f"building-pattern-{patterns.pattern_key(lay)}"
    lock.write_text("123")
    assert patterns.start_build(lay, (9, 0)) is False and not env
    lock.unlink()
    assert patterns.start_build(lay, (9, 0)) is False      # once per process


def test_one_build_at_a_time_until_the_extern_kernel_is_built(lay, env, monkeypatch):
    """Each pattern's build would compile the extern kernel first: until it is in the
    cache only one build runs on the machine, and a pattern turned away tries again."""
    from tests.compiled.test_cuda_straight import _layout

    other = _layout("optimal_control_200")
    assert patterns.start_build(lay, (9, 0)) is True
    (args,) = env
    assert args[-1].endswith("building-extern-sm90")
    assert patterns.start_build(other, (9, 0)) is False and len(env) == 1
    patterns.kernel_path((9, 0)).write_bytes(b"x")        # the first build made it
    assert patterns.start_build(other, (9, 0)) is True
    assert env[1][-1].endswith(f"building-pattern-{patterns.pattern_key(other)}")


def test_ready_takes_the_pattern_kernel(lay, env):
    for p in (patterns.kernel_path((9, 0)), patterns.cubin_path(patterns.pattern_key(lay), (9, 0))):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
    assert patterns.ready(lay, (9, 0))
    assert group.pattern_dispatcher(lay) == ("kernel", (9, 0)) and not env


def test_in_process_build_without_background_compiles(lay, env, monkeypatch):
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "0")
    assert group.pattern_dispatcher(lay) == ("kernel", (9, 0)) and not env


def test_a_failed_build_falls_back_to_the_default_kernel_once(lay, env, monkeypatch):
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "0")
    monkeypatch.setattr(group, "_failed_patterns", set())
    tries = []

    def fail(lay, cc):
        tries.append(cc)
        raise OSError("libnvJitLink.so.13: cannot open shared object file")

    monkeypatch.setattr(patterns, "kernel_for", fail)
    with pytest.warns(RuntimeWarning, match="nvJitLink.*default kernel serves it"):
        assert group.pattern_dispatcher(lay) is None
    assert group.pattern_dispatcher(lay) is None and tries == [(9, 0)] and not env


def test_cli_builds_the_pickled_layout_for_this_gpu(tmp_path, monkeypatch):
    from caspar_backend.compiled import __main__ as cli

    seen = []
    monkeypatch.setattr(cache, "compute_capability", lambda: "90")
    monkeypatch.setattr(patterns, "build_from_file", lambda f, cc: seen.append((f, cc)) or 1.0)
    lock = tmp_path / "lock"
    lock.write_text("1")
    assert cli.main(["--cuda-pattern", "L.pkl", "--lock", str(lock)]) == 0
    assert seen == [("L.pkl", (9, 0))] and not lock.exists()


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["ik", "optimal_control_200", "every_op"])
def test_pattern_kernel_gives_the_loops_bits(case, monkeypatch):
    """solve_batch's kernel path with the pattern's generated chains and tapes (built in
    this process: minutes of NVVM for the extern kernel unless the cache has it, then
    ~10 s per pattern) against the loops kernel and the tape interpreter: statuses,
    iterations, x and f bit for bit -- 'every_op' (test_cuda_tape_code's model) checks
    the generated math functions against the interpreter's libdevice calls."""
    pytest.importorskip("casadi")
    import numpy as np

    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch import solve as batch_solve
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", True)
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "0")
    if case == "ik":
        nlp, bounds = arm_ik()
        problem, inputs = from_casadi(nlp, **bounds), dict(p=arm_targets(128, seed=5))
    elif case == "every_op":
        from tests.compiled.test_cuda_tape_code import _every_op_model

        model = _every_op_model()
        ng = model["g"].shape[0]
        problem = from_casadi(model, x0=[0.6, 0.7, 0.8], lbx=[0.1] * 3, ubx=[0.95] * 3,
                              p=[1.5, 0.3], lbg=[-50.0] * ng, ubg=[50.0] * ng)
        rng = np.random.default_rng(1)
        inputs = dict(x0=rng.uniform(0.2, 0.9, (64, 3)),
                      p=np.column_stack([rng.uniform(1, 2, 64), rng.uniform(0, 1, 64)]))
    else:
        d = {b.name: b for b in bank(include_slow=False)}[case].build()
        problem = from_casadi(_nlp(d))
        x0 = np.asarray(d["x0"], float)
        rng = np.random.default_rng(0)
        inputs = dict(x0=x0 + 0.01 * rng.standard_normal((64, x0.size)),
                      **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")})

    def solve(on):
        monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "1" if on else "0")
        r = problem.solve_batch(print_level=0, device="cuda", **inputs)
        assert set(r.path) == {"kernel"}
        return [np.asarray(a) for a in (r.status, r.iterations, r.x, r.f)]

    loops, gen = solve(False), solve(True)
    assert patterns._dispatchers                       # the pattern's kernel ran
    for a, b in zip(loops, gen):
        np.testing.assert_array_equal(a, b)


def test_pattern_key_is_hashed_once_per_layout(lay, monkeypatch):
    from caspar_backend.compiled.cuda import straight

    monkeypatch.setattr(patterns, "_keys", weakref.WeakKeyDictionary())
    calls = []
    real = straight.pattern_key
    monkeypatch.setattr(straight, "pattern_key", lambda l: calls.append(1) or real(l))
    assert patterns.pattern_key(lay) == patterns.pattern_key(lay) and len(calls) == 1
