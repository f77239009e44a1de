"""caspar's least squares (CPU) against COLMAP's bundle adjuster (Ceres) on the same
pycolmap-synthesized reconstruction and starting point.

    python benchmarks/bench_bundle_ceres.py [--images 60 --points 6000 --track 6]
                                            [--threads 2] [--repeat 3] [--json out.json]
                                            [--device cpu|cuda] [--linear-solver NAME]

Per repeat, interleaved (the machine's load hits both alike): Ceres with ``--threads``
threads on a fresh copy of the reconstruction, then caspar end to end from the
reconstruction in memory -- reading it (:func:`read_reconstruction`), building and
compiling the problem, solving, writing the refined values back -- with its setup and
solve times apart.  Both use Ceres' default trust-region options (caspar's defaults
are Ceres') and ``--threads`` threads (caspar's ``num_threads``: its Schur
elimination); intrinsics and the first two poses are constant.  Reported: time,
iterations, initial / final cost (1/2 sum r^2, px^2), mean reprojection error, and
caspar's cost at Ceres' solution (evaluated by caspar, a check on both).  Repeat 0 is
reported apart as cold (the process's first solve: SciPy's sparse/linear-algebra imports,
~1 s on the CI machine, and code generation); the median of the others is warm.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.models.colmap_scene import (ceres_bundle_adjustment, gauge_images,  # noqa: E402
                                            reconstruction_state, synthetic_reconstruction)


def run_caspar(rec, gauge, threads=1, device="cpu", linear_solver=None):
    from caspar_backend.lsq.colmap import BundleAdjustmentProblem, read_reconstruction

    t0 = time.perf_counter()
    data = read_reconstruction(rec)
    t_read = time.perf_counter() - t0
    ba = BundleAdjustmentProblem(data, constant_intrinsics=True, constant_images=gauge)
    t_build = time.perf_counter() - t0 - t_read
    s = ba.solve(num_threads=threads, device=device, linear_solver_type=linear_solver)
    t_solve = time.perf_counter() - t0 - t_read - t_build
    ba.write(rec, s.x)
    total = time.perf_counter() - t0
    return ba, s, dict(seconds=total, read=t_read, build=t_build, solve=t_solve,
                       write=total - t_read - t_build - t_solve)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--points", type=int, default=6000)
    ap.add_argument("--track", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="caspar's device (cuda: evaluation and the Schur solve on the GPU)")
    ap.add_argument("--linear-solver", default=None,
                    help="caspar's linear_solver_type (default: its automatic choice)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=str, default=None)
    a = ap.parse_args(argv)
    import pycolmap

    rows = []
    # synthesized once (minutes at 1,000 images), fresh copies read back from COLMAP's
    # binary files for each side of each repeat
    scene = tempfile.mkdtemp(prefix="bench_ba_")
    synthetic_reconstruction(a.images, a.points, a.track, seed=a.seed).write_binary(scene)
    for k in range(a.repeat):
        rec_c, rec_o = pycolmap.Reconstruction(scene), pycolmap.Reconstruction(scene)
        gauge = gauge_images(rec_o)
        ceres = ceres_bundle_adjustment(rec_c, num_threads=a.threads)
        ba, s, ours = run_caspar(rec_o, gauge, a.threads, a.device, a.linear_solver)
        q, t, xyz = reconstruction_state(rec_c, ba.data.image_ids, ba.data.point_ids)
        x_ceres = ba.x_of(q, t, xyz)
        row = dict(repeat=k, n_obs=int(len(ba.data.obs_image)),
                   ceres_seconds=ceres["seconds"], ceres_iterations=ceres["iterations"],
                   ceres_initial_cost=ceres["initial_cost"], ceres_final_cost=ceres["final_cost"],
                   ceres_termination=ceres["termination"],
                   ceres_mean_error=ba.mean_reprojection_error(x_ceres),
                   caspar_cost_at_ceres_solution=ba.problem.cost(x_ceres),
                   caspar_seconds=ours["seconds"], caspar_read=ours["read"],
                   caspar_build=ours["build"], caspar_solve=ours["solve"],
                   caspar_write=ours["write"], caspar_iterations=s.num_iterations,
                   caspar_initial_cost=s.initial_cost, caspar_final_cost=s.final_cost,
                   caspar_termination=s.termination_type,
                   caspar_linear_solver=s.linear_solver_type,
                   caspar_initial_mean_error=ba.mean_reprojection_error(ba.x0),
                   caspar_mean_error=ba.mean_reprojection_error(s.x),
                   ratio=ours["seconds"] / ceres["seconds"])
        rows.append(row)
        print(f"[{k}] obs={row['n_obs']}  Ceres {ceres['seconds']:.3f} s, {ceres['iterations']} it, "
              f"cost {ceres['initial_cost']:.6e} -> {ceres['final_cost']:.6e}, err "
              f"{row['ceres_mean_error']:.6f} px | caspar {ours['seconds']:.3f} s (read "
              f"{ours['read']:.3f}, build {ours['build']:.3f}, solve {ours['solve']:.3f}, write "
              f"{ours['write']:.3f}), {s.num_iterations} it, cost {s.initial_cost:.6e} -> "
              f"{s.final_cost:.6e}, err {row['caspar_mean_error']:.6f} px "
              f"[{s.linear_solver_type}] | ratio {row['ratio']:.2f}", flush=True)
    shutil.rmtree(scene, ignore_errors=True)
    # repeat 0 is cold (this process's first solve: imports of SciPy's sparse and linear
    # algebra modules, code generation); the others are warm
    warm = rows[1:] or rows
    med = {k: float(np.median([r[k] for r in warm])) for k in ("ceres_seconds", "caspar_seconds",
                                                                "caspar_solve", "ratio")}
    rel = (rows[-1]["caspar_final_cost"] - rows[-1]["ceres_final_cost"]) / rows[-1]["ceres_final_cost"]
    print(f"cold (repeat 0): Ceres {rows[0]['ceres_seconds']:.3f} s, caspar "
          f"{rows[0]['caspar_seconds']:.3f} s, ratio {rows[0]['ratio']:.2f}")
    print(f"warm median (repeats 1..): Ceres {med['ceres_seconds']:.3f} s, caspar "
          f"{med['caspar_seconds']:.3f} s (solve {med['caspar_solve']:.3f} s), ratio "
          f"{med['ratio']:.2f}; final cost caspar - Ceres relative {rel:+.2e}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(dict(args=vars(a), rows=rows, warm_median=med),
                                                   indent=1))


if __name__ == "__main__":
    main()
