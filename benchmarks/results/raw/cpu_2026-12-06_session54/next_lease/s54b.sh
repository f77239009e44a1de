#!/usr/bin/env bash
# After s54a on the same machine (this tree's kernel with line info in /tmp/cc_lineinfo):
# Nsight Compute's source counters on one Van der Pol launch of B = 132 at 32 lanes, then
# at 1 lane if time allows; exported per SASS instruction and per Python line.
export PYTHONDONTWRITEBYTECODE=1
ls /tmp/site >/dev/null || exit 3
N=/usr/local/cuda/bin/ncu
for L in 32 1; do
  [ $SECONDS -gt 330 ] && break
  timeout $((560 - SECONDS)) $N --section SourceCounters --section WarpStateStats \
    -k regex:_solve_rows -c 1 -f -o $OUT/vdp132_l$L python .stage/run/ncu_vdp.py 132 $L 2>&1 | tail -n 3
  $N --import $OUT/vdp132_l$L.ncu-rep --page source --csv --print-source sass \
    | gzip > $OUT/sass_l$L.csv.gz
  $N --import $OUT/vdp132_l$L.ncu-rep --page source --csv --print-source cuda \
    | gzip > $OUT/src_l$L.csv.gz
  $N --import $OUT/vdp132_l$L.ncu-rep --page details --csv > $OUT/details_l$L.csv 2>&1
  echo "lanes $L at ${SECONDS}s"
done
ls -la $OUT
