#!/usr/bin/env bash
# Call 3 (after s56a/s56b, the machine warm, this tree's kernel in /tmp/cc): Nsight
# Compute's per-instruction counters and warp stalls on one Van der Pol launch of B = 132
# at 32 lanes, exported per SASS instruction (gzip CSV) for a per-function sum on the VM.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
X=$PWD/.stage/x; NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 420 $NCU --clock-control none --section SourceCounters --section WarpStateStats \
  -k regex:_solve_rows -c 1 -f -o $OUT/vdp132 python $X/ncu_one.py $X/vdp_new.pkl.xz 132 32 0 \
  2>&1 | tail -n 5
echo "profiled at ${SECONDS}s"
timeout $((590 - SECONDS)) $NCU --import $OUT/vdp132.ncu-rep --page source --csv \
  --print-source sass | gzip > $OUT/sass.csv.gz
timeout 20 $NCU --import $OUT/vdp132.ncu-rep --page details --csv > $OUT/details.csv 2>&1
rm -f $OUT/vdp132.ncu-rep
ls -la $OUT
