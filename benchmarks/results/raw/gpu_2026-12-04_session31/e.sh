set -x
R=$PWD
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
mkdir -p /tmp/reft && tar -xf .gpurun/ref.tar -C /tmp/reft
nproc; python -c "import numba; print(numba.__version__)"
# warm both trees' kernels at once (separate caches: keyed by the kernel sources)
(cd /tmp/reft/ref && PYTHONPATH=/tmp/site:$PWD python -m caspar_backend warmup > $OUT/warm_ref.txt 2>&1) &
python -m caspar_backend warmup > $OUT/warm_new.txt 2>&1
wait
tail -3 $OUT/warm_ref.txt $OUT/warm_new.txt
python .gpurun/capture_probe.py > $OUT/capture_probe.txt 2>&1 &
for rep in 1 2; do
  for t in /tmp/reft/ref $PWD; do
    (cd $t && PYTHONPATH=/tmp/site:$t python benchmarks/bench_service.py --repeat 2 --requests 6000) >> $OUT/service_ab.txt 2>&1
  done
done
wait
for t in /tmp/reft/ref $PWD; do
  echo "== $t" >> $OUT/sb_scaling.txt
  (cd $t && PYTHONPATH=/tmp/site:$t python $R/.gpurun/sb_scaling.py) >> $OUT/sb_scaling.txt 2>&1
done
for t in /tmp/reft/ref $PWD; do
  (cd $t && PYTHONPATH=/tmp/site:$t python benchmarks/bench_service.py --repeat 2 --requests 6000 --stub) >> $OUT/service_stub_ab.txt 2>&1
done
python .gpurun/timing_onoff.py > $OUT/timing_onoff.txt 2>&1
