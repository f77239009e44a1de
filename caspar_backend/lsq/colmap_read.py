"""A pycolmap ``Reconstruction`` as arrays (:class:`ReconstructionData`).

pycolmap has no array accessors for observations.  Two routes, chosen by what the
reconstruction holds:

* **binary** (the usual case): the reconstruction is written with COLMAP's own binary
  writer to a temporary directory (``/dev/shm`` where it exists) and ``images.bin`` is
  parsed with NumPy (one header per image, its 2D points as one structured array) --
  cost proportional to the 2D points, ~0.1 us each;
* **objects**, when the images hold more than :data:`OBJECT_ROUTE_RATIO` 2D points per
  observation (pycolmap's synthetic scenes keep every projection of every point as a
  2D point: 150,000 per image at 1,000 images, a 3.6 GB ``images.bin`` for 10^6
  observations): each image's observed 2D points through
  ``Image.get_observation_points2D()`` -- cost proportional to the observations,
  ~6 us each.

Both give the same arrays: images and points in ascending id order, each image's
observations in 2D-point index order.  Only trivial rigs (one camera per frame, the
frame's pose is the image's) are supported; anything else is a clear error.
"""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError

#: COLMAP camera models: parameter names in COLMAP's order
CAMERA_MODELS = {
    "SIMPLE_PINHOLE": ("f", "cx", "cy"),
    "PINHOLE": ("fx", "fy", "cx", "cy"),
    "SIMPLE_RADIAL": ("f", "cx", "cy", "k"),
    "RADIAL": ("f", "cx", "cy", "k1", "k2"),
}

_INVALID_POINT3D = np.iinfo(np.uint64).max
_OBS = np.dtype([("x", "<f8"), ("y", "<f8"), ("point3D_id", "<u8")])


@dataclass
class ReconstructionData:
    """The arrays of a reconstruction (final).

    ``camera_ids`` int64 (C,), ``camera_models`` list of C names, ``camera_params``
    list of C float64 vectors; ``image_ids`` int64 (I,), ``image_camera`` int64 (I,)
    (index into the cameras), ``image_frame_ids`` int64 (I,), ``quat_wxyz`` (I, 4) and
    ``translation`` (I, 3) of ``cam_from_world``; ``point_ids`` int64 (P,), ``xyz``
    (P, 3); observations ``obs_image``, ``obs_point`` int64 (K,) (indices into the
    images / points) and ``obs_xy`` float64 (K, 2)."""

    camera_ids: np.ndarray
    camera_models: list
    camera_params: list
    image_ids: np.ndarray
    image_camera: np.ndarray
    image_frame_ids: np.ndarray
    quat_wxyz: np.ndarray
    translation: np.ndarray
    point_ids: np.ndarray
    xyz: np.ndarray
    obs_image: np.ndarray
    obs_point: np.ndarray
    obs_xy: np.ndarray


def _positions(ids, query):
    """Position in ``ids`` (distinct, any order) of each of ``query`` (-1 where absent,
    or where the search lands on another id: the caller checks): a lookup table when the
    ids are dense enough (COLMAP numbers points 1, 2, ...), a sorted search otherwise."""
    if ids.size == 0:
        return np.full(query.size, -1, dtype=np.int64)
    lo, hi = int(ids.min()), int(ids.max())
    if lo >= 0 and hi < 4 * ids.size + (1 << 20):
        lut = np.full(hi + 1, -1, dtype=np.int64)
        lut[ids] = np.arange(ids.size)
        inside = (query >= 0) & (query <= hi)
        return np.where(inside, lut[np.clip(query, 0, hi)], -1)
    order = np.argsort(ids)
    pos = np.searchsorted(ids, query, sorter=order)
    return order[np.minimum(pos, len(order) - 1)]


#: 2D points per observation above which observations are read object by object
#: (measured on a 2-core VM: both routes 0.17 s at 40 -- 200 images of 4,000 2D points,
#: 20,000 observations; at 200, 0.64 s against 2.3 s)
OBJECT_ROUTE_RATIO = 40


def read_reconstruction(rec, route: str | None = None) -> ReconstructionData:
    """The arrays of a pycolmap ``Reconstruction`` (registered images only); ``route``
    'binary' or 'objects' (None: by :data:`OBJECT_ROUTE_RATIO`, module docstring)."""
    cam_ids = np.array(sorted(rec.cameras.keys()), dtype=np.int64)
    models, params = [], []
    for cid in cam_ids:                                  # one per camera (few)
        cam = rec.cameras[int(cid)]
        name = cam.model.name
        if name not in CAMERA_MODELS:
            raise ModelError(f"camera {int(cid)}: model {name} is not supported (supported: "
                             f"{', '.join(CAMERA_MODELS)})")
        models.append(name)
        params.append(np.array(cam.params, dtype=float))
    for fid, fr in rec.frames.items():
        if fr.num_data_ids() != 1:
            raise ModelError(f"frame {fid}: {fr.num_data_ids()} sensors; only trivial rigs "
                             "(one camera per frame) are supported")
    if route is None:
        images = rec.images
        n2d = sum(img.num_points2D() for img in images.values())
        posed = all(img.has_pose for img in images.values())
        route = ("objects" if posed and n2d > OBJECT_ROUTE_RATIO
                 * max(rec.compute_num_observations(), 1) else "binary")
    if route not in ("binary", "objects"):
        raise ValueError(f"route={route!r}: expected 'binary' or 'objects'")
    (image_ids, img_cam, quats, trans, point_ids, xyz, obs_image, pid,
     obs_xy) = (_by_objects if route == "objects" else _by_binary)(rec)
    frame_ids = np.array([rec.images[int(i)].frame_id for i in image_ids], dtype=np.int64)
    pos = _positions(point_ids, pid)
    if pid.size and (np.any(pos < 0) or np.any(point_ids[pos] != pid)):
        raise ModelError("an observation refers to a 3D point that the reconstruction lacks")
    return ReconstructionData(
        camera_ids=cam_ids, camera_models=models, camera_params=params,
        image_ids=image_ids, image_camera=np.searchsorted(cam_ids, img_cam),
        image_frame_ids=frame_ids, quat_wxyz=quats, translation=trans,
        point_ids=point_ids, xyz=xyz, obs_image=obs_image, obs_point=pos, obs_xy=obs_xy)


def _by_binary(rec):
    """``(image_ids, image camera ids, quat_wxyz, translation, point_ids, xyz,
    obs_image, obs point ids, obs_xy)`` through COLMAP's binary writer."""
    tmp = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="caspar_colmap_", dir=tmp) as d:
        rec.write_binary(d)
        with open(os.path.join(d, "images.bin"), "rb") as f:
            buf = f.read()
        with open(os.path.join(d, "points3D.bin"), "rb") as f:
            pbuf = f.read()
    n_img = struct.unpack_from("<Q", buf, 0)[0]
    off = 8
    img_ids, img_cam, quats, trans, blocks, counts = [], [], [], [], [], []
    view = memoryview(buf)
    for _ in range(n_img):                               # one header per image
        iid, = struct.unpack_from("<I", buf, off)
        q = struct.unpack_from("<4d", buf, off + 4)
        t = struct.unpack_from("<3d", buf, off + 36)
        cid, = struct.unpack_from("<I", buf, off + 60)
        end = buf.index(b"\0", off + 64)
        npts, = struct.unpack_from("<Q", buf, end + 1)
        off = end + 9 + npts * _OBS.itemsize
        blocks.append(view[end + 9:off])
        counts.append(npts)
        img_ids.append(iid)
        img_cam.append(cid)
        quats.append(q)
        trans.append(t)
    point_ids, xyz = _points3d(pbuf)
    allobs = np.frombuffer(b"".join(blocks), dtype=_OBS)
    img_of = np.repeat(np.arange(n_img, dtype=np.int64), np.array(counts, dtype=np.int64))
    seen = allobs["point3D_id"] != _INVALID_POINT3D
    every = bool(seen.all())
    pid = (allobs["point3D_id"] if every else allobs["point3D_id"][seen]).astype(np.int64)
    obs_xy = np.empty((pid.size, 2))
    for j, c in enumerate("xy"):
        obs_xy[:, j] = allobs[c] if every else allobs[c][seen]
    obs_img = img_of if every else img_of[seen]
    image_ids = np.array(img_ids, dtype=np.int64)
    img_cam = np.array(img_cam, dtype=np.int64)
    quats = np.array(quats, dtype=float).reshape(-1, 4)
    trans = np.array(trans, dtype=float).reshape(-1, 3)
    order = np.argsort(image_ids, kind="stable")
    if np.any(order != np.arange(order.size)):       # (COLMAP writes ascending ids)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        obs_img = rank[obs_img]
        by = np.argsort(obs_img, kind="stable")       # each image's 2D points in order
        obs_img, pid, obs_xy = obs_img[by], pid[by], obs_xy[by]
        image_ids, img_cam, quats, trans = (v[order] for v in (image_ids, img_cam, quats,
                                                                trans))
    porder = np.argsort(point_ids, kind="stable")
    return (image_ids, img_cam, quats, trans, point_ids[porder], xyz[porder], obs_img, pid,
            obs_xy)


def _by_objects(rec):
    """As :func:`_by_binary`, from each image's observed 2D points (every image posed)."""
    images = rec.images
    image_ids = np.array(sorted(images.keys()), dtype=np.int64)
    I = image_ids.size
    img_cam = np.empty(I, dtype=np.int64)
    quats, trans = np.empty((I, 4)), np.empty((I, 3))
    xy, pids, counts = [], [], np.empty(I, dtype=np.int64)
    for k, iid in enumerate(image_ids.tolist()):          # one pass per image
        img = images[iid]
        pose = img.cam_from_world()
        qx, qy, qz, qw = pose.rotation.quat                 # Eigen's (x, y, z, w)
        quats[k] = (qw, qx, qy, qz)
        trans[k] = pose.translation
        img_cam[k] = img.camera_id
        pts = img.get_observation_points2D()
        counts[k] = len(pts)
        xy.extend([p.xy for p in pts])                      # one object per observation
        pids.extend([p.point3D_id for p in pts])
    points = rec.points3D
    point_ids = np.array(sorted(points.keys()), dtype=np.int64)
    xyz = np.array([points[p].xyz for p in point_ids.tolist()], dtype=float).reshape(-1, 3)
    obs_xy = np.array(xy, dtype=float).reshape(-1, 2)
    return (image_ids, img_cam, quats, trans, point_ids, xyz,
            np.repeat(np.arange(I, dtype=np.int64), counts), np.array(pids, dtype=np.int64),
            obs_xy)


def _points3d(buf):
    """``(point_ids int64 (P,), xyz (P, 3))`` of COLMAP's points3D.bin: per point id
    u64, xyz 3 f8, rgb 3 u8, error f8, track length u64, then (image id u32, point2D
    index u32) per track element."""
    n, = struct.unpack_from("<Q", buf, 0)
    starts = np.empty(n, dtype=np.int64)
    off = 8
    length_at = struct.Struct("<Q").unpack_from
    for k in range(n):                                   # one offset per point
        starts[k] = off
        off += 51 + 8 * length_at(buf, off + 43)[0]
    head = np.frombuffer(buf, dtype=np.uint8)[starts[:, None] + np.arange(32)]
    words = head.view("<f8")                             # id (as bits), x, y, z
    return words[:, 0].view("<i8").copy(), words[:, 1:].copy()
