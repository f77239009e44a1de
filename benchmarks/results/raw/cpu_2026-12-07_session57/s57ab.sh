#!/usr/bin/env bash
# Session 56's s56ab.sh (both kernels compiled, then timed) with session 57's straight-line
# experiment (straight/s57s.sh, cut at 200 s) run beside its compiles: GPU-bound against
# their CPU, and done before the compiles (>= ~200 s on the device) end.  Carry .stage/main
# and .stage/x, with s56ab.sh and straight/ in .stage/x.
X=$PWD/.stage/x
(S57_LIMIT=200 PK=$X/vdp_new.pkl.xz bash $X/straight/s57s.sh > $OUT/s57s.log 2>&1) &
bash $X/s56ab.sh
wait
echo "s57s:"; tail -n 2 $OUT/s57s.log
