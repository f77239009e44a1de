"""benchmarks/bench_kernel_parts_cuda.py without a GPU: the variants' bit-for-bit check
(passes for a rewrite with the same operations, fails for one that changes a pivot), and
the timing kernels through numba-cuda's simulator."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("casadi")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VARIANTS = os.path.join(ROOT, "benchmarks", "kernel_variants")
VARIANT = os.path.join(VARIANTS, "ldl_pipelined.py")


def _lines(out: str) -> list:
    return [json.loads(s) for s in out.splitlines() if s.startswith("{")]


def _run(args, env=None):
    out = subprocess.run([sys.executable, "benchmarks/bench_kernel_parts_cuda.py", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, **(env or {})))
    assert out.returncode == 0, out.stderr[-3000:]
    return _lines(out.stdout)


def test_variant_check_passes_same_operations_and_fails_a_changed_one(tmp_path):
    wrong = tmp_path / "wrong.py"
    src = open(VARIANT).read().replace("dk -= yv * lv", "dk -= yv * lv * (1.0 + 1e-15)")
    assert src != open(VARIANT).read()
    wrong.write_text(src)
    for path, same in ((VARIANT, True), (str(wrong), False)):
        rows = _run(["--problem", "vdp", "--cpu-only", "--pieces", "ldl_factor",
                     "--variants", path])
        assert rows[0] == {"variant_check": "ldl_factor", "bit_for_bit": same}
        assert rows[1]["cpu_us"]["ldl_factor"] > 0


def test_timing_kernels_run_in_the_simulator():
    pytest.importorskip("numba_cuda")
    rows = _run(["--problem", "ik", "--sizes", "2", "--reps", "1", "--pieces",
                 "ldl_factor,kkt_matvec", "--variants", VARIANT],
                env={"NUMBA_ENABLE_CUDASIM": "1"})
    timed = {(r["piece"], r["mode"]) for r in rows if "piece" in r}
    assert timed == {("ldl_factor", "main"), ("ldl_factor", "main_inline"),
                     ("ldl_factor", "variant"), ("ldl_factor", "variant_inline"),
                     ("kkt_matvec", "main"), ("kkt_matvec", "main_inline")}
    assert all(r["us_per_call"] > 0 for r in rows if "piece" in r)


VARIANT_FILES = {"ldl_pipelined.py": ("ldl_factor", "ldl_solve")}


def test_every_variant_file_is_listed():
    files = {f for f in os.listdir(VARIANTS) if f.endswith(".py") and f != "__init__.py"}
    assert files == set(VARIANT_FILES)


@pytest.mark.parametrize("problem", ("vdp", "ik"))
@pytest.mark.parametrize("name", sorted(VARIANT_FILES))
def test_variants_are_the_pieces_bit_for_bit(problem, name):
    pieces = VARIANT_FILES[name]
    rows = _run(["--problem", problem, "--cpu-only", "--pieces", ",".join(pieces),
                 "--variants", os.path.join(VARIANTS, name)])
    checks = {r["variant_check"]: r["bit_for_bit"] for r in rows if "variant_check" in r}
    assert checks == dict.fromkeys(pieces, True)
