set -x
R=$PWD
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1
mkdir -p /tmp/reft && tar -xf .gpurun/ref.tar -C /tmp/reft
(cd /tmp/reft/ref && PYTHONPATH=/tmp/site:$PWD python -m caspar_backend warmup > $OUT/warm_ref.txt 2>&1) &
python -m caspar_backend warmup > $OUT/warm_new.txt 2>&1
wait
for rep in 1 2; do
  for t in /tmp/reft/ref $R; do
    echo "== $t" >> $OUT/sb_scaling.txt
    (cd $t && PYTHONPATH=/tmp/site:$t python $R/.gpurun/sb_scaling.py) >> $OUT/sb_scaling.txt 2>&1
  done
done
for rep in 1 2; do
  for t in /tmp/reft/ref $R; do
    (cd $t && PYTHONPATH=/tmp/site:$t python benchmarks/bench_service.py --repeat 2 --requests 6000) >> $OUT/service_ab.txt 2>&1
  done
done
python .gpurun/prof9241.py > $OUT/prof9241.txt 2>&1
