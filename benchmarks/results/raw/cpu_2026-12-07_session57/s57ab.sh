#!/usr/bin/env bash
# Session 56's s56ab.sh (both kernels compiled, then timed) with session 57's straight-line
# experiment (straight/s57s.sh, cut at 260 s) run beside its compiles: GPU-bound against
# their CPU; its end may overlap the first timing round (which the rounds repeat).
# Carry .stage/main and .stage/x, with s56ab.sh and straight/ in .stage/x.
X=$PWD/.stage/x
(S57_LIMIT=260 PK=$X/vdp_new.pkl.xz bash $X/straight/s57s.sh > $OUT/s57s.log 2>&1) &
bash $X/s56ab.sh
wait
echo "s57s:"; tail -n 2 $OUT/s57s.log
