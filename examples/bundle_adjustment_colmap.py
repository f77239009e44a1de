"""Bundle adjustment of a COLMAP reconstruction with caspar's Levenberg-Marquardt.

    pip install caspar-backend[ba]        # pycolmap
    python examples/bundle_adjustment_colmap.py

A reconstruction synthesized by pycolmap (60 images, 6,000 points, track length 6,
1 px noise on the observations, perturbed points and poses) is read into a caspar
least-squares problem -- one residual template for all 36,000 observations, points
eliminated onto cameras by the Schur complement -- refined, and written back.
Intrinsics and the first two poses are held constant (the gauge), as in
COLMAP's BundleAdjustmentConfig.  On a machine with a usable GPU the solve runs there
(``device='cuda'``), else on the CPU with one thread per core for the elimination.
"""

import os

import pycolmap

from caspar_backend.device import gpu_problem

from caspar_backend.lsq.colmap import BundleAdjustmentProblem

# --- a noisy reconstruction
pycolmap.set_random_seed(0)
opts = pycolmap.SyntheticDatasetOptions()
opts.num_rigs, opts.num_cameras_per_rig = 1, 1
opts.num_frames_per_rig, opts.num_points3D, opts.track_length = 60, 6000, 6
rec = pycolmap.synthesize_dataset(opts)
gauge = sorted(rec.frames.keys())[:2]
truth = {f: pycolmap.Rigid3d(rec.frames[f].rig_from_world.matrix()) for f in gauge}  # copies
noise = pycolmap.SyntheticNoiseOptions()
noise.point2D_stddev, noise.point3D_stddev = 1.0, 0.05
noise.rig_from_world_translation_stddev, noise.rig_from_world_rotation_stddev = 0.05, 0.5
pycolmap.synthesize_noise(noise, rec)
for f, pose in truth.items():          # the gauge images keep their true poses
    rec.frames[f].rig_from_world = pose
gauge_images = [i for i in rec.images.keys() if rec.images[i].frame_id in gauge]

# --- caspar: read, solve (Ceres' default options), write back
ba = BundleAdjustmentProblem.from_reconstruction(rec, constant_intrinsics=True,
                                                 constant_images=gauge_images)
print(ba.problem)
device = "cuda" if gpu_problem(False) is None else "cpu"
summary = ba.solve(minimizer_progress_to_stdout=True, device=device,
                   num_threads=os.cpu_count() or 1)
print(summary.full_report())
ba.write(rec, summary.x)
rec.update_point_3d_errors()
print(f"mean reprojection error: {ba.mean_reprojection_error(ba.x0):.4f} px -> "
      f"{rec.compute_mean_reprojection_error():.4f} px")
