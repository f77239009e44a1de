"""COLMAP-synthesized reconstructions and COLMAP's own bundle adjuster (Ceres), for the
least-squares tests and benchmarks (pycolmap needed: ``pip install caspar-backend[ba]``).

:func:`synthetic_reconstruction`: ``pycolmap.synthesize_dataset`` with one rig of one
camera (SIMPLE_RADIAL, COLMAP's default synthetic camera), ``n_images`` frames,
``n_points`` points of track length ``track_length``; then ``synthesize_noise`` adds
``pixel_noise`` px to the observations and perturbs points (``point_noise``) and poses
(``translation_noise``, ``rotation_noise`` degrees) for the starting point -- except the
first two images, whose true poses are put back: they fix the gauge (held constant by
both solvers), and a perturbed gauge would leave a residual no solver can remove.

:func:`ceres_bundle_adjustment`: ``pycolmap``'s default bundle adjuster (Ceres) on the
reconstruction, intrinsics and the first two poses constant, Ceres' trust-region
options as given (default: Ceres' own defaults, as caspar's), ``num_threads`` threads.
"""

from __future__ import annotations

import time

import numpy as np

#: Ceres' defaults, which caspar's least-squares options share
CERES_DEFAULTS = dict(max_num_iterations=50, function_tolerance=1e-6,
                      gradient_tolerance=1e-10, parameter_tolerance=1e-8)


def synthetic_reconstruction(n_images=60, n_points=6000, track_length=6, pixel_noise=1.0,
                             point_noise=0.05, translation_noise=0.05, rotation_noise=0.5,
                             seed=0):
    """A noisy pycolmap ``Reconstruction`` (see the module docstring)."""
    import pycolmap

    pycolmap.set_random_seed(seed)
    o = pycolmap.SyntheticDatasetOptions()
    o.num_rigs, o.num_cameras_per_rig = 1, 1
    o.num_frames_per_rig, o.num_points3D, o.track_length = n_images, n_points, track_length
    o.num_points2D_without_point3D = 0
    rec = pycolmap.synthesize_dataset(o)
    first = sorted(rec.frames.keys())[:2]
    # copies: rig_from_world is a reference into the reconstruction
    truth = {f: pycolmap.Rigid3d(rec.frames[f].rig_from_world.matrix()) for f in first}
    noise = pycolmap.SyntheticNoiseOptions()
    noise.point2D_stddev = pixel_noise
    noise.point3D_stddev = point_noise
    noise.rig_from_world_translation_stddev = translation_noise
    noise.rig_from_world_rotation_stddev = rotation_noise
    pycolmap.synthesize_noise(noise, rec)
    for f, pose in truth.items():
        rec.frames[f].rig_from_world = pose
    return rec


def gauge_images(rec):
    """Image ids of the first two frames (held constant)."""
    first = sorted(rec.frames.keys())[:2]
    return [int(i) for i in sorted(rec.images.keys()) if rec.images[i].frame_id in first]


def ceres_bundle_adjustment(rec, num_threads=2, refine_intrinsics=False, **solver_options):
    """Refine ``rec`` in place with COLMAP's bundle adjuster (Ceres); returns a dict:
    ``seconds`` (adjuster creation and solve, wall clock), ``solver_seconds`` (Ceres'
    own total), ``initial_cost``, ``final_cost`` (Ceres' 1/2 sum r^2), ``iterations``,
    ``termination``, ``message``, ``linear_solver`` (the one COLMAP chose)."""
    import pycolmap

    opts = pycolmap.BundleAdjustmentOptions()
    # refine_intrinsics: focal length and distortion (COLMAP's defaults), else none
    opts.refine_focal_length = refine_intrinsics
    opts.refine_principal_point = False
    opts.refine_extra_params = refine_intrinsics
    opts.print_summary = False
    so = opts.ceres.solver_options
    so.num_threads = num_threads
    for k, v in {**CERES_DEFAULTS, **solver_options}.items():
        setattr(so, k, v)
    cfg = pycolmap.BundleAdjustmentConfig()
    for iid in rec.images.keys():
        cfg.add_image(int(iid))
    first = sorted(rec.frames.keys())[:2]
    for fid in first:
        cfg.set_constant_rig_from_world_pose(int(fid))
    if not refine_intrinsics:
        for cid in rec.cameras.keys():
            cfg.set_constant_cam_intrinsics(int(cid))
    t0 = time.perf_counter()
    adjuster = pycolmap.create_default_bundle_adjuster(opts, cfg, rec)
    summary = adjuster.solve()
    seconds = time.perf_counter() - t0
    return ceres_result(summary, seconds)


def ceres_result(summary, seconds):
    """The dict of :func:`ceres_bundle_adjustment` from pycolmap's summary (Ceres'
    ``Solver::Summary`` at full precision through ``todict()``)."""
    c = summary.todict()["ceres_summary"]
    return dict(seconds=seconds, solver_seconds=c["total_time_in_seconds"],
                iterations=c["num_successful_steps"] + c["num_unsuccessful_steps"] - 1,
                initial_cost=c["initial_cost"], final_cost=c["final_cost"],
                termination=c["termination_type"].name, message=c["message"],
                linear_solver=c["linear_solver_type_used"].name,
                report=summary.brief_report())


def reconstruction_state(rec, image_ids, point_ids):
    """``(quat_wxyz (I, 4), translation (I, 3), xyz (P, 3))`` of ``rec`` in the given
    orders (what :meth:`BundleAdjustmentProblem.x_of` takes)."""
    q = np.array([rec.images[int(i)].cam_from_world().rotation.quat for i in image_ids])
    t = np.array([rec.images[int(i)].cam_from_world().translation for i in image_ids])
    xyz = np.array([rec.points3D[int(p)].xyz for p in point_ids])
    return q[:, [3, 0, 1, 2]], t, xyz
