#!/usr/bin/env bash
# Next lease (any call after s49a.sh on the same warm machine): why the CPU service tops out at
# ~13-14k IK solves/s on the 16-core host while each batch's kernel call (B ~ 35) takes 1.7-1.9 ms
# there -- ~50 us per instance on 16 threads, where one VM core takes ~76 us per instance alone.
# The service with its kernel calls on 1, 2, 4, 8, 16 threads, under Numba's omp and workqueue
# layers and GNU OpenMP's active and passive waits; the solve_batch call alone at B = 35.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/cc >/dev/null || exit 3
python -c "import numba; print('numba', numba.__version__)"; python -c "import tbb" 2>/dev/null && echo "tbb importable"
for layer in omp workqueue; do for wait in passive active; do for th in 1 4 16; do
  [ $SECONDS -gt 300 ] && continue
  echo -n "layer=$layer wait=$wait threads=$th "
  NUMBA_THREADING_LAYER=$layer OMP_WAIT_POLICY=$wait timeout 40 python benchmarks/bench_service.py \
    --repeat 2 --threads $th 2>/dev/null | tail -n 1
done; done; done | tee $OUT/service_threads.txt
echo "done at ${SECONDS}s"
# the CPU batch by kernel threads (Van der Pol B = 1,000 and IK 10^4; the VM: 1.8-1.95x on 2 cores)
timeout 120 python .stage/run/cpu_batch_threads.py 2>/dev/null | tee $OUT/cpu_batch_threads.txt
lscpu | grep -i "cache\|model name\|^CPU(s)" | tee $OUT/lscpu.txt
echo "all done at ${SECONDS}s"
