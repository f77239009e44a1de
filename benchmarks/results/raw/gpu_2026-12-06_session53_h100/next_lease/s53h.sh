#!/usr/bin/env bash
# Where the Van der Pol kernel's time goes at 32 lanes (and at one, for comparison):
# Nsight Compute's source counters on one launch of B = 132 (184 ms at 32 lanes on session
# 53's H100), the kernel compiled with line info (~240 s, its own cache), per SASS
# instruction and per Python source line.  Sum per function with session 33's
# ncu_functions.py (raw gpu_2026-12-04_session33/) or per line from src_*.csv.
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
N=/usr/local/cuda/bin/ncu
D=benchmarks/results/raw/gpu_2026-12-06_session53_h100/next_lease
timeout 400 python $D/ncu_vdp.py 4 32 2>&1 | tail -n 2      # the compile, outside ncu
echo "compiled at ${SECONDS}s"
for L in 32 1; do
  timeout $((560 - SECONDS)) $N --section SourceCounters --section WarpStateStats \
    -k regex:_solve_rows -c 1 -f -o $OUT/vdp132_l$L python $D/ncu_vdp.py 132 $L 2>&1 | tail -n 3
  $N --import $OUT/vdp132_l$L.ncu-rep --page source --csv --print-source sass \
    | gzip > $OUT/sass_l$L.csv.gz
  $N --import $OUT/vdp132_l$L.ncu-rep --page source --csv --print-source cuda \
    | gzip > $OUT/src_l$L.csv.gz
  echo "lanes $L at ${SECONDS}s"
done
ls -la $OUT
